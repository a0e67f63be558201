/*
 * The mutex with fencing tokens and the amnesia defence, N = 3 nodes,
 * 2 clients, at most one node crash (the node restarts empty).
 * docs/model.md describes the abstraction, the bounds and the mutants.
 *
 * Time is an integer tick, advanced by Env at any moment, without bound;
 * every clock runs at the same rate (DRIFT is the allowance only). Times
 * are kept relative (ticks left, ticks elapsed, capped), so the state space
 * is finite with unbounded time: a key set with PX TTL lives TTL ticks, a
 * client's elapsed time counts the ticks since its t0.
 *
 * Messages: one FIFO request channel per client-node connection
 * (req[c*N+n]); a node serves its connections in any order. Each node call
 * runs atomically (a Lua script). A reply is counted in the client's round
 * tally (rnd/yes/no/hi/ovt) when the node answers, if that round is still
 * open and undecided: a round is decided at its deciding reply and later
 * replies are dropped, as the client drops them (QuorumRound::counts). The
 * time between the answer and the client acting on it is the client's own
 * slowness, which the model leaves free.
 *
 * Properties (assertions; each names the promise it checks):
 *   C3_exclusion        no two clients' validity windows overlap
 *                       (window = [decision, t0 + validity), validity =
 *                       ttl - elapsed - drift, as the holder computes it)
 *   C5_tokens_unique    no fencing token is handed out twice
 *   C6_tokens_increase  a token is above every token handed out before
 *                       its acquisition was invoked
 *   no_resurrection     a lock value, once gone from a node, is never set
 *                       there again (a late extend must not recreate it)
 *
 * With -DFAILOVER, node 0 is not restarted empty but replaced by its
 * replica: replication stops at a moment Env chooses (the replica keeps a
 * copy of node 0's state then, its keys expiring in their own time), and
 * later the replica is promoted in node 0's place, holding the master's
 * marker. Every client's first request to the promoted server opens a new
 * session there, which runs check_marker first.
 *
 * Mutant switches (-DMUTANT_x): FENCE_EQ, RELEASE_NOCHECK, ACQ_NO_NX,
 * EXTEND_RECREATE, NO_DELAY, NO_REMERGE, REMERGE_SAME_ROUND, NO_CHECK
 * (with FAILOVER: sessions open without check_marker), KEEP_SESSION (with
 * FAILOVER: client 0 keeps a session to the replica opened before its
 * promotion, whose check ran then).
 */

#define N        3
#define MAJ      2          /* majority(N) */
#define SOURCES  2          /* N - MAJ + 1: recovery_sources_needed */
#define NC       2          /* clients */
#ifndef CALLS
#define CALLS    2          /* acquire calls of client 0 (client 1: one), one attempt each */
#endif
#ifndef TTL
#define TTL      3
#endif
#ifndef DRIFT
#define DRIFT    1
#endif
#ifndef MAXTTL
#define MAXTTL   3          /* the recovery delay, max_ttl >= TTL */
#endif
#ifndef QCAP
#define QCAP     2          /* requests in flight on one connection */
#endif
#ifndef EXTENDS
#define EXTENDS  1          /* extends per hold (0 or 1) */
#endif
#ifndef FENCED
#define FENCED   1          /* phase 2, the fence round */
#endif
#ifndef RELEASES
#define RELEASES 1          /* 0: a holder never releases (its keys expire) */
#endif
#ifndef CRASHES
#define CRASHES  1          /* node crashes (0 or 1) */
#endif
#ifndef DELAYS
#define DELAYS   2          /* requests held in the network at once */
#endif
#ifndef DELAYOPS
#define DELAYOPS 30         /* the requests that may be held: bit op */
#endif
#ifndef MAXROUNDS
#define MAXROUNDS 2         /* kMaxFenceRounds is 3 */
#endif

/* requests */
#define Q_ACQ    1
#define Q_FENCE  2
#define Q_EXT    3
#define Q_REL    4
/* replies */
#define R_GRANT     1
#define R_BUSY      2
#define R_REF       3       /* node rules: unmarked, recovering, remerge */
#define R_STORED    4
#define R_NOTSTORED 5
#define R_EXTOK     6
#define R_EXTNO     7
#define R_ERR       8       /* connection reset by the node's crash */

#define max(a, b) ((a) > (b) -> (a) : (b))

chan req[NC * N] = [QCAP] of { byte, byte, byte };   /* op, arg, round */

/* each client's open round: its id (0 = none open) and its tally */
byte rnd[NC];
byte yes[NC];
byte no[NC];
byte hi[NC];          /* highest counter reported (fence_round.cpp highest_seen) */
bool ovt[NC];         /* overtaken */

/* node state */
byte key[N];          /* lock value held, 0 = none */
byte kleft[N];        /* ticks until the key expires */
byte ctr[N];          /* the fence counter of the one resource */
bool marked[N];       /* the identity marker {prefix}node */
byte recleft[N];      /* ticks left of {prefix}recovering, 0 = none */
bool remerge[N];      /* the second-merge mark: the fence hash's empty field */

bool crashed;
#ifdef FAILOVER
/* node 0's replica: its copy of node 0's state from the moment
   replication stopped (snapped) */
byte rkey; byte rkleft; byte rctr; bool rmarked; byte rrecleft; bool rremerge;
bool snapped;
bool foreign;         /* node 0's marker names another server (the old master) */
bool fresh[NC];       /* client c's next request to node 0 opens a session there */
#endif
byte inflight;        /* requests held in the network */
byte el[NC];          /* ticks since the client's t0 (capped at TTL) */
bool timing[NC];      /* el counts */

/* ghosts for the properties */
byte everset[N];      /* values ever set on each node (bit v) */
byte wleft[NC];       /* ticks left of each client's validity window */
short issued;         /* tokens handed out (bit T) */
byte hw;              /* highest token handed out */
byte inv_hw[NC];      /* hw when the client's current acquire was invoked */
hidden byte C3_exclusion, C5_tokens_unique, C6_tokens_increase, no_resurrection;

inline set_key(n, v) {
  no_resurrection = (key[n] == v || !(everset[n] & (1 << v)));
  assert(no_resurrection);
  everset[n] = everset[n] | (1 << v);
  key[n] = v;
  kleft[n] = TTL
}

/* mirrors: lib/scripts/scripts.cpp kNodeRules */
#define refused(n) (!marked[n] || recleft[n] != 0)

/* One answer, counted if its round is open and undecided. */
inline answer(c, kind, a) {
  if
  :: r == rnd[c] && r != 0 && yes[c] < MAJ && no[c] <= N - MAJ ->
     if
     :: kind == R_GRANT || kind == R_EXTOK || kind == R_STORED -> yes[c]++; hi[c] = max(hi[c], a)
     :: kind == R_NOTSTORED ->
        no[c]++; hi[c] = max(hi[c], a);
        if :: a >= arg -> ovt[c] = 1 :: else -> skip fi
     :: else -> no[c]++
     fi
  :: else -> skip
  fi
}

/* One request from client c, run atomically on node n. */
inline serve(n, c) {
#ifdef FAILOVER
  /* a session's first word on the promoted server */
  if
  :: n == 0 && fresh[c] ->
     fresh[c] = 0;
#ifndef MUTANT_NO_CHECK
     /* mirrors: lib/scripts/scripts.cpp kCheckMarker */
     /* mirrors: lib/operations/client_core.cpp CheckMarkerCall */
     if
     :: foreign -> marked[0] = 0; foreign = 0
     :: else -> skip
     fi
#endif
  :: else -> skip
  fi;
#endif
  if
  :: op == Q_ACQ ->
     /* mirrors: lib/scripts/scripts.cpp kAcquireBatch */
     /* mirrors: lib/scripts/reader_scripts.cpp writer_grant */
     if
     :: refused(n) -> answer(c, R_REF, 0)
#ifdef MUTANT_ACQ_NO_NX
     :: !refused(n) -> set_key(n, arg); answer(c, R_GRANT, ctr[n])
#else
     :: !refused(n) && key[n] == 0 -> set_key(n, arg); answer(c, R_GRANT, ctr[n])
     :: !refused(n) && key[n] != 0 -> answer(c, R_BUSY, 0)
#endif
     fi
  :: op == Q_FENCE ->
     /* mirrors: lib/scripts/scripts.cpp kFenceBatch */
     if
     :: refused(n) || remerge[n] -> answer(c, R_REF, 0)
#ifdef MUTANT_FENCE_EQ
     :: else -> if
                :: ctr[n] <= arg -> ctr[n] = arg; answer(c, R_STORED, arg)
                :: else -> answer(c, R_NOTSTORED, ctr[n])
                fi
#else
     :: else -> if
                :: ctr[n] < arg -> ctr[n] = arg; answer(c, R_STORED, arg)
                :: else -> answer(c, R_NOTSTORED, ctr[n])
                fi
#endif
     fi
  :: op == Q_EXT ->
     /* mirrors: lib/scripts/scripts.cpp kExtendBatch */
     if
     :: key[n] == arg -> kleft[n] = TTL; answer(c, R_EXTOK, 0)
#ifdef MUTANT_EXTEND_RECREATE
     :: key[n] == 0 ->
        no_resurrection = 0;   /* an extend creating a key it did not find */
        assert(no_resurrection);
        set_key(n, arg); answer(c, R_EXTOK, 0)
     :: key[n] != arg && key[n] != 0 -> answer(c, R_EXTNO, 0)
#else
     :: key[n] != arg -> answer(c, R_EXTNO, 0)
#endif
     fi
  :: op == Q_REL ->
     /* mirrors: lib/scripts/scripts.cpp kReleaseBatch */
#ifdef MUTANT_RELEASE_NOCHECK
     key[n] = 0; kleft[n] = 0
#else
     if
     :: key[n] == arg -> key[n] = 0; kleft[n] = 0
     :: else -> skip
     fi
#endif
  fi;
  op = 0; arg = 0; r = 0
}

proctype Node(byte n) {
  byte op, arg, r;
end:
  do
  :: atomic { req[0 * N + n]?op, arg, r -> inflight--; serve(n, 0) }
  :: atomic { req[1 * N + n]?op, arg, r -> inflight--; serve(n, 1) }
  od
}

/* A crash: the node restarts empty; requests in flight on its
   connections fail (the connection is reset). */
inline crash(n) {
  key[n] = 0; kleft[n] = 0; ctr[n] = 0; marked[n] = 0; recleft[n] = 0; remerge[n] = 0;
  c = 0;
  do
  :: c < NC ->
     do
     :: req[c * N + n]?op, arg, r ->
        inflight--;
        if
        :: op != Q_REL -> answer(c, R_ERR, 0)
        :: else -> skip
        fi
     :: empty(req[c * N + n]) -> break
     od;
     c++
  :: else -> break
  od;
  c = 0; op = 0; arg = 0; r = 0
}

#ifdef FAILOVER
/* The failover: node 0's master is gone (requests in flight on its
   connections fail, as at a crash) and its replica takes its place, with
   the state it had when replication stopped, the master's marker in it. */
inline failover() {
  crash(0);
  key[0] = rkey; kleft[0] = rkleft; ctr[0] = rctr; marked[0] = rmarked;
  recleft[0] = rrecleft; remerge[0] = rremerge;
  foreign = rmarked;
  c = 0;
  /* No session from before the promotion is kept: a connection to the
     master broke with it, and a cluster link opens a new session to a
     server that starts serving slots (one opened while it was a replica,
     or a restarted replica that reported itself a master for a moment,
     ran its first word before the promotion). */
  /* mirrors: lib/transport/cluster_link.cpp renew_if_newly_master */
  do
#ifdef MUTANT_KEEP_SESSION
  :: c < NC -> fresh[c] = (c != 0); c++
#else
  :: c < NC -> fresh[c] = 1; c++
#endif
  :: else -> break
  od;
  c = 0
}
#endif

proctype Env() {
  byte n, c, op, arg, r;
end:
  do
  :: atomic {
       n = 0;
       do
       :: n < N ->
          if :: kleft[n] > 0 -> kleft[n]--; if :: kleft[n] == 0 -> key[n] = 0 :: else -> skip fi
             :: else -> skip fi;
          if :: recleft[n] > 0 -> recleft[n]-- :: else -> skip fi;
          n++
       :: else -> break
       od;
#ifdef FAILOVER
       if :: rkleft > 0 -> rkleft--; if :: rkleft == 0 -> rkey = 0 :: else -> skip fi
          :: else -> skip fi;
       if :: rrecleft > 0 -> rrecleft-- :: else -> skip fi;
#endif
       n = 0;
       do
       :: n < NC ->
          if :: timing[n] && el[n] < TTL -> el[n]++ :: else -> skip fi;
          if :: wleft[n] > 0 -> wleft[n]-- :: else -> skip fi;
          n++
       :: else -> break
       od;
       n = 0
     }
  /* node 0 only: the nodes are symmetric (every client sends to all
     three in one step), so a crash of node 1 or 2 is the same up to a
     renaming of the nodes */
  :: atomic { !crashed && CRASHES > 0 -> crashed = 1; crash(0) }
#ifdef FAILOVER
  /* replication from node 0 stops here (once) */
  :: atomic { !snapped && !crashed ->
       snapped = 1; rkey = key[0]; rkleft = kleft[0]; rctr = ctr[0]; rmarked = marked[0];
       rrecleft = recleft[0]; rremerge = remerge[0] }
  :: atomic { snapped && !crashed -> crashed = 1; failover() }
#endif
  od
}

/* The recovery round of a client that saw the unmarked node: probe every
   node (each read at its own moment), plan, write the recover script. */
/* mirrors: lib/operations/recovery_operation.cpp RecoveryOperation::act */
/* mirrors: lib/protocol/recovery_plan.cpp plan_recovery */
/* mirrors: lib/scripts/scripts.cpp kProbe */
/* mirrors: lib/scripts/scripts.cpp kRecover */
inline probe_read(i) {
  seen = seen | (1 << i);
  if
  :: marked[i] && !remerge[i] -> srcs++; m = max(m, ctr[i])
  :: else -> skip
  fi
}

/* Node 0 is the one that crashes: the probe finds it unmarked (and, for
   the second merge, with its second-merge mark and its delay over); the
   sources are nodes 1 and 2, each read at its own moment. */
proctype Recoverer() {
  byte seen, srcs, m;
end_idle:
  crashed && !marked[0];
  /* the first merge */
  do
  :: atomic { !(seen & 2) -> probe_read(1) }
  :: atomic { !(seen & 4) -> probe_read(2) }
  :: seen == 6 -> break
  od;
  atomic {
    if
    :: !marked[0] && srcs >= SOURCES ->
       ctr[0] = max(ctr[0], m);
#ifndef MUTANT_NO_DELAY
       recleft[0] = MAXTTL;
#endif
#ifndef MUTANT_NO_REMERGE
       remerge[0] = 1;
#endif
       marked[0] = 1
    :: else -> skip
    fi;
    seen = 0; srcs = 0; m = 0
  }
#ifndef MUTANT_NO_REMERGE
  /* the second merge, once the recovering key has expired */
  /* mirrors: lib/protocol/recovery_plan.cpp plan_second_merge */
  /* mirrors: lib/operations/recovery_operation.cpp RecoveryOperation::remerge */
  /* mirrors: lib/scripts/scripts.cpp kRemerge */
  /* mirrors: lib/scripts/scripts.cpp kCounterRules */
#ifdef MUTANT_REMERGE_SAME_ROUND
  /* the sources are read in the same probe round that finds the delay
     over: a source may be read before the target */
  do
  :: atomic { !(seen & 2) -> probe_read(1) }
  :: atomic { !(seen & 4) -> probe_read(2) }
  :: atomic { !(seen & 1) && remerge[0] && recleft[0] == 0 -> seen = seen | 1 }
  :: seen == 7 -> break
  od;
#else
  /* a probe answer shows the delay over; the sources are read by a
     probe sent after it */
end_wait:
  remerge[0] && recleft[0] == 0;
  do
  :: atomic { !(seen & 2) -> probe_read(1) }
  :: atomic { !(seen & 4) -> probe_read(2) }
  :: seen == 6 -> break
  od;
#endif
  atomic {
    if
    :: srcs >= SOURCES && remerge[0] && recleft[0] == 0 ->
       ctr[0] = max(ctr[0], m); remerge[0] = 0
    :: else -> skip
    fi;
    seen = 0; srcs = 0; m = 0
  }
#endif
}

/* opens round `myr` of client c and sends its request to every node */
inline open_round(o, a) {
  myr++;
  rnd[c] = myr; yes[c] = 0; no[c] = 0; hi[c] = 0; ovt[c] = 0;
  send_all(o, a)
}

inline close_round() {
  rnd[c] = 0; yes[c] = 0; no[c] = 0; hi[c] = 0; ovt[c] = 0
}

/* A request reaches its node at once (served in the sender's step), or,
   while fewer than DELAYS requests are in flight, is held in the network
   and served later; one behind a held request on its connection waits
   behind it (FIFO). */
inline send_one(n, o, a) {
  op = o; arg = a; r = myr;
  if
  :: empty(req[c * N + n]) -> serve(n, c)
  :: (inflight < DELAYS && (DELAYOPS & (1 << op))) || nempty(req[c * N + n]) ->
     req[c * N + n]!op, arg, r; inflight++
  fi;
  op = 0; arg = 0; r = 0
}

#ifdef SPLITSEND
/* each request leaves in a step of its own: the other client's requests
   may reach the nodes in between */
inline send_all(o, a) {
  atomic { send_one(0, o, a) }
  atomic { send_one(1, o, a) }
  atomic { send_one(2, o, a) }
}
#else
inline send_all(o, a) {
  send_one(0, o, a);
  send_one(1, o, a);
  send_one(2, o, a)
}
#endif

#define decided(c) (yes[c] >= MAJ || no[c] > N - MAJ)

inline check_c3() {
  o = 0;
  do
  :: o < NC ->
     if
     :: o != c -> C3_exclusion = (wleft[o] == 0); assert(C3_exclusion)
     :: else -> skip
     fi;
     o++
  :: else -> break
  od;
  o = 0
}

/* A release (or the undo of a failed attempt) with the value. */
/* mirrors: lib/operations/release_operation.cpp ReleaseOperation::start */
/* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::fail_attempt */
inline release() {
  atomic {
    wleft[c] = 0;
    if
    :: RELEASES -> send_all(Q_REL, val)
    :: else -> skip
    fi
  }
}

proctype Client(byte c) {
  byte calls, val, myr, T, rounds, o, op, arg, r;
  bool won;
  short validity;

  do
  :: calls < (c == 0 -> CALLS : 1) ->
     /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::begin_attempt */
     atomic {
       calls++;
       inv_hw[c] = hw;
       el[c] = 0; timing[c] = 1;
       val = c * CALLS + calls;
       open_round(Q_ACQ, val)
     }
     /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::on_vote */
     /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::begin_fencing */
     /* mirrors: lib/protocol/fence_round.cpp first_proposal */
     atomic { decided(c) -> won = (yes[c] >= MAJ); T = hi[c] + 1; close_round() }
     if
     :: won && !FENCED ->
        /* unfenced: the validity check alone; the token is not used */
        atomic {
          validity = TTL - el[c] - DRIFT;
          if
          :: validity > 0 && validity - el[c] > 0 -> check_c3(); wleft[c] = validity - el[c]
          :: else -> skip
          fi;
          T = 0; el[c] = 0; timing[c] = 0
        }
        goto hold
     :: won && FENCED ->
propose:
        /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::propose */
        /* mirrors: lib/protocol/fence_round.cpp FenceRound::answer */
        atomic { rounds++; open_round(Q_FENCE, T) }
        /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::on_fence_response */
        /* mirrors: lib/protocol/validity.cpp validity_left */
        atomic {
          decided(c) ->
          validity = TTL - el[c] - DRIFT;
          won = (yes[c] >= MAJ);
          if
          :: !won && ovt[c] && rounds < MAXROUNDS && validity > 0 ->
             /* mirrors: lib/protocol/fence_round.cpp next_proposal */
             T = max(hi[c], T) + 1; won = 0; close_round(); goto propose
          :: else -> close_round()
          fi
        }
        if
        :: won && validity > 0 ->
           /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::hand_out_if_valid */
           atomic {
             C5_tokens_unique = !(issued & (1 << T));
             assert(C5_tokens_unique);
             C6_tokens_increase = (T > inv_hw[c]);
             assert(C6_tokens_increase);
             issued = issued | (1 << T);
             hw = max(hw, T);
             if
             :: validity - el[c] > 0 -> check_c3(); wleft[c] = validity - el[c]
             :: else -> skip
             fi;
             rounds = 0; T = 0; won = 0; el[c] = 0; timing[c] = 0
           }
           /* hold; at most one extend, then release */
hold:
           if
           :: wleft[c] > 0 && EXTENDS > 0 ->
              /* mirrors: lib/operations/extend_operation.cpp ExtendOperation::start */
              /* mirrors: lib/operations/extend_operation.cpp extend_refusal */
              atomic {
                if
                :: wleft[c] > 0 && EXTENDS > 0 -> el[c] = 0; timing[c] = 1; open_round(Q_EXT, val)
                :: else -> skip   /* lost before it started */
                fi
              }
              /* mirrors: lib/operations/extend_operation.cpp extend_verdict */
              atomic {
                (rnd[c] == 0 || decided(c) || wleft[c] == 0) ->
                validity = TTL - el[c] - DRIFT;
                if
                :: rnd[c] != 0 && yes[c] >= MAJ && wleft[c] > 0 && validity > 0 &&
                   validity - el[c] > 0 ->
                   check_c3(); wleft[c] = validity - el[c]
                :: else -> skip
                fi;
                close_round(); el[c] = 0; timing[c] = 0
              }
           :: true -> skip
           fi;
           release()
        :: else -> release()
        fi
     :: else -> release()
     fi;
     atomic { rounds = 0; T = 0; el[c] = 0; timing[c] = 0; validity = 0; val = 0; won = 0 }
  :: else -> break
  od
}

init {
  atomic {
    byte i;
    i = 0;
    do
    :: i < N -> marked[i] = 1; i++
    :: else -> break
    od;
    run Env(); run Recoverer();
    run Node(0); run Node(1); run Node(2);
    run Client(0); run Client(1)
  }
}
