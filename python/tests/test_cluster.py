"""A quorum file whose members are Redis Clusters (docs/algorithm.md, "A
cluster as a member"): the binding takes and releases a lock over two real
clusters of three masters and one single server, with no setting of its
own, and every member holds it in the resource's slot."""

from __future__ import annotations

import time

from redlock_quorum import Client


def holders(node, resource: str):
    """The lock keys of `resource` on `node`, whatever slot tag they carry."""
    reply = node.command("KEYS", "redlock:*lock:" + resource)
    return [line for line in reply.split(b"\r\n") if line.startswith(b"redlock:")]


def quorum_file(tmp_path, cluster_members, single):
    """A quorum file of the cluster members and the single server."""
    quorum = tmp_path / "redlock.toml"
    text = ""
    for member in cluster_members:
        text += "[[node]]\ncluster = [" + ", ".join(f'"{s}"' for s in member.seeds) + "]\n"
    text += f'[[node]]\naddress = "{single.address}"\n'
    quorum.write_text(text)
    return quorum


def test_a_cluster_member_in_the_quorum_file_just_works(tmp_path, cluster_members, nodes):
    single = nodes[0]
    quorum = quorum_file(tmp_path, cluster_members, single)
    with Client(config=str(quorum)) as client:
        with client.lock("nightly-report", fenced=True) as guard:
            assert guard.valid
            assert guard.fence is not None
            # The single server holds it under the slot's hash tag too.
            keys = holders(single, "nightly-report")
            assert len(keys) == 1 and b"{" in keys[0], keys
            assert guard.value.encode() in single.command("GET", keys[0].decode())
        deadline = time.monotonic() + 5
        while holders(single, "nightly-report"):
            assert time.monotonic() < deadline, "the lock stayed on the single server"
            time.sleep(0.01)


def test_a_set_across_slots_over_cluster_members_is_one_lock(tmp_path, cluster_members, nodes):
    """A set whose resources hash to different slots is split per slot on
    each cluster member, and held, renewed and released as one lock."""
    single = nodes[0]
    quorum = quorum_file(tmp_path, cluster_members, single)
    names = ["cart:1", "cart:2", "cart:3"]
    with Client(config=str(quorum)) as client:
        with client.lock(names) as guard:
            assert guard.valid
            assert guard.resources == names
            tags = set()
            for name in names:
                keys = holders(single, name)
                assert len(keys) == 1, keys
                tags.add(keys[0].split(b"}")[0])
                assert guard.value.encode() in single.command("GET", keys[0].decode())
            assert len(tags) > 1, "the set's resources share one slot"
        deadline = time.monotonic() + 5
        while any(holders(single, name) for name in names):
            assert time.monotonic() < deadline, "the set stayed on the single server"
            time.sleep(0.01)
