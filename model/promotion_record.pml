/*
 * Which identity markers a promoted server keeps (check_marker, and
 * check_slot_markers with its record of the check): two servers, 1 and 2,
 * that take turns as the master of one node (a cluster shard, or a single
 * member's address). docs/model.md describes the abstraction and bounds.
 *
 * The node's marker, in each server's dataset, names the server that
 * wrote it (owner; 0 = none) and the replication history it was written
 * in (hist: the writer's replication id then). The replica copies the
 * master's dataset — the marker and the record with it — at moments the
 * search chooses, and keeps what it copied last (replication lag; a
 * replica that never caught up keeps what it had as a master). A
 * promotion makes the replica master with a replication id no server had
 * before; the old master becomes its replica. Sessions open on the master
 * at any moment, each running the check first: on a server that shows a
 * promotion, unless the dataset's record names this server and its
 * replication id (the check was made in this history), it deletes a
 * marker that names another server or another history, then records the
 * check, a write that may fail (a stale map's slot, a marker the scan
 * could not read). A master without a marker is recovered: it writes its
 * own, in its history.
 *
 * Property:
 *   marker_reflects_history  after a session's check, the master's marker,
 *                            if any, was written by that server in its
 *                            current history: every grant the node
 *                            acknowledged since is in its dataset. (A
 *                            marker copied from another server, or its
 *                            own from before it followed another master,
 *                            may lack the grants acknowledged last; kept,
 *                            the node would grant on it without the
 *                            recovery delay.)
 *
 * Mutant switches (-DMUTANT_x): RECORD_RUN_ID_ALONE (the record names the
 * server, not its history), OWN_MARKER_ANY_HISTORY (a marker naming the
 * server stands whatever history it was written in).
 */

#ifndef PROMOTIONS
#define PROMOTIONS 6
#endif

byte master = 1;
byte promotions;
byte replid[3];           /* each server's master_replid */
bool promoted[3];         /* INFO replication shows a promotion */
byte owner[3];            /* the marker in each server's dataset: its writer */
byte hist[3];             /* ... and the history it was written in */
byte rec_srv[3];          /* the record of the check in each dataset */
byte rec_id[3];
hidden byte marker_reflects_history;

#define replica (3 - master)

/* mirrors: lib/scripts/scripts.cpp kCheckSlotMarkers */
/* mirrors: lib/scripts/scripts.cpp own_marker_stands */
/* mirrors: lib/operations/client_core.cpp CheckSlotMarkersCall */
inline check() {
  if
  :: promoted[master] ->
     if
#ifdef MUTANT_RECORD_RUN_ID_ALONE
     :: rec_srv[master] == master -> skip
#else
     :: rec_srv[master] == master && rec_id[master] == replid[master] -> skip
#endif
     :: else ->
        if
#ifdef MUTANT_OWN_MARKER_ANY_HISTORY
        :: owner[master] != 0 && owner[master] != master ->
#else
        :: owner[master] != 0 && (owner[master] != master || hist[master] != replid[master]) ->
#endif
           owner[master] = 0; hist[master] = 0
        :: else -> skip
        fi;
        if
        :: rec_srv[master] = master; rec_id[master] = replid[master]
        :: skip   /* the record's write failed */
        fi
     fi
  :: else -> skip
  fi;
  marker_reflects_history =
      (owner[master] == 0 || (owner[master] == master && hist[master] == replid[master]));
  assert(marker_reflects_history)
}

init {
  atomic { replid[1] = 1; owner[1] = 1; hist[1] = 1 }
end:
  do
  /* a session opens on the master */
  :: atomic { check() }
  /* the recovery round marks a master without a marker */
  /* mirrors: lib/scripts/scripts.cpp marker_name */
  :: atomic { owner[master] == 0 -> owner[master] = master; hist[master] = replid[master] }
  /* the replica copies the master's dataset */
  :: atomic {
       owner[replica] = owner[master]; hist[replica] = hist[master];
       rec_srv[replica] = rec_srv[master]; rec_id[replica] = rec_id[master]
     }
  /* the replica takes over with what it copied last, in a new history */
  /* mirrors: lib/transport/cluster_link.cpp renew_if_newly_master */
  :: atomic {
       promotions < PROMOTIONS ->
       promotions++;
       master = replica;
       promoted[master] = 1;
       replid[master] = promotions + 1
     }
  od
}
