/*
 * The fair line: N = 3 nodes, a holder H that holds the key on every node
 * and releases it node by node, and two waiters A (ticket 1) and B
 * (ticket 2) that record their places with claims. docs/model.md
 * describes the abstraction and the bounds.
 *
 * Tickets are given (A drew before B); time is not modelled (no place,
 * claim or key lapses: every waiter is live). Each waiter sends at most
 * ROUNDS record rounds (A one). Connections: per waiter and node a FIFO
 * lock connection (req: records and give-backs) and a FIFO subscriber
 * connection (sub: the grants a release publishes); a node serves its
 * connections in any order, a waiter reads its subscriber connections in
 * any order. A record's answer is handled by the waiter when the node
 * answers (its give-back then waits on the lock connection like any
 * request).
 *
 * Properties (assertions):
 *   exclusion               no two waiters count a majority of grants
 *   no_overtaking           a waiter whose ticket is recorded on a majority
 *                           before the other waiter's first record is not
 *                           overtaken by it (docs/safety.md, fair locks)
 *   no_count_after_giveback a waiter never counts a grant of a node that
 *                           it gave back there (ghost: each grant on a node
 *                           has an epoch; a give-back retires every epoch
 *                           up to it)
 *
 * Mutant switch: -DMUTANT_GIVEBACK_RACE (a grant message from a node is
 * still counted after a give-back there: the code before the fix).
 */

#define N      3
#define MAJ    2
#define NW     2            /* waiters A = 0 (ticket 1), B = 1 (ticket 2) */
#ifndef ROUNDS
#define ROUNDS 2            /* record rounds of B */
#endif
#ifndef AROUNDS
#define AROUNDS 1           /* record rounds of A */
#endif

/* record answers, lib/scripts/reply_parse.hpp QueueState */
#define S_BEHIND        0
#define S_GRANTED       2
#define S_FIRST_HELD    3
#define S_HELD_BEHIND   4

/* requests on the lock connection */
#define Q_RECORD   1
#define Q_GIVEBACK 2

#define H_VALUE 3           /* the holder's value; waiter w's claim value is w + 1 */

chan req[NW * N] = [3] of { byte, byte };      /* op, round */
chan sub[NW * N] = [2] of { byte };            /* grant message: its epoch */

byte key[N];          /* 0 free, w + 1 a claim of waiter w, H_VALUE the holder */
byte listed[N];       /* places: bit w */
byte claims[N];       /* claims left: bit w */
byte kep[N];          /* ghost: grants to claims made so far by each node; the
                         key's grant is the latest */
bool hreleased[N];

/* each waiter's claim: its latest record round, the nodes whose grants it
   counts, the nodes it gave the grant back on, the round at each
   give-back */
byte myr[NW];
byte cg[NW];
byte gave[NW];
byte gbr[NW * N];

/* ghosts */
bool held[NW];
byte gb_ep[NW * N];   /* the latest epoch given back, per waiter and node */
bool a_first;         /* A recorded on a majority before B's first record */
hidden byte exclusion, no_overtaking, no_count_after_giveback;

#define first_listed(n) ((listed[n] & 1) -> 0 : 1)

/* The release of `v` on node n, with the node's grant to the first
   waiter: the key set to its claim's value, the grant published on its
   subscriber connection. */
/* mirrors: lib/scripts/fair_scripts.cpp kFairReleaseBody */
/* mirrors: lib/scripts/fair_scripts.cpp serve_first */
inline fair_release(n, v, w) {
  if
  :: w != 255 && ((claims[n] >> w) & 1) && key[n] != w + 1 ->
     claims[n] = claims[n] & ~(1 << w)    /* the releaser takes back its claim */
  :: else -> skip
  fi;
  if
  :: key[n] == v ->
     key[n] = 0;
     if
     :: listed[n] != 0 && ((claims[n] >> first_listed(n)) & 1) ->
        f = first_listed(n);
        claims[n] = claims[n] & ~(1 << f);
        key[n] = f + 1; kep[n]++;
        sub[f * N + n]!kep[n]
     :: else -> skip
     fi
  :: else -> skip
  fi;
  f = 0
}

/* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::claim_vote */
inline vote(n, ep, w) {
  if
  :: !((cg[w] >> n) & 1) ->
     no_count_after_giveback = (ep > gb_ep[w * N + n]);
     assert(no_count_after_giveback);
     cg[w] = cg[w] | (1 << n);
     if
     :: ((cg[w] & 1) + ((cg[w] >> 1) & 1) + ((cg[w] >> 2) & 1)) >= MAJ && !held[w] ->
        exclusion = !held[1 - w];
        assert(exclusion);
        no_overtaking = !(w == 1 && a_first && !held[0]);
        assert(no_overtaking);
        held[w] = 1
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::give_back */
inline give_back(n, w) {
  cg[w] = cg[w] & ~(1 << n);
  gave[w] = gave[w] | (1 << n);
  gbr[w * N + n] = myr[w];
  gb_ep[w * N + n] = kep[n];
  req[w * N + n]!Q_GIVEBACK, 0
}

/* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::note_record */
/* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::on_late_record */
inline note_record(n, w) {
  if
  :: held[w] || r != myr[w] -> skip          /* won already, or an earlier round's answer */
  :: else ->
     if
     :: st == S_HELD_BEHIND -> give_back(n, w)
     :: st == S_GRANTED && r > gbr[w * N + n] -> vote(n, ep, w)
     :: st == S_GRANTED && r <= gbr[w * N + n] -> skip   /* sent before the give-back */
     :: st == S_BEHIND && ((cg[w] >> n) & 1) -> give_back(n, w)
     :: st == S_BEHIND && !((cg[w] >> n) & 1) -> skip
     :: st == S_FIRST_HELD -> skip
     fi
  fi
}

/* A grant message heard on the subscriber connection. */
/* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::granted */
/* mirrors: lib/operations/acquire_waiting.cpp claim_given_back_ */
inline heard(n, w) {
#ifdef MUTANT_GIVEBACK_RACE
  vote(n, ep, w)
#else
  if
  :: (gave[w] >> n) & 1 -> skip    /* given back there: only a later record counts */
  :: else -> vote(n, ep, w)
  fi
#endif
}

/* The record: ticket_enqueue with a claim. */
/* mirrors: lib/scripts/fair_scripts.cpp kTicketEnqueueBody */
/* mirrors: lib/scripts/reader_scripts.cpp writer_grant */
inline record(n, w) {
  listed[n] = listed[n] | (1 << w);
  if
  :: first_listed(n) == w && key[n] == w + 1 -> st = S_GRANTED
  :: first_listed(n) == w && key[n] == 0 ->
     key[n] = w + 1; kep[n]++; st = S_GRANTED
  :: first_listed(n) == w && key[n] != 0 && key[n] != w + 1 -> st = S_FIRST_HELD
  :: first_listed(n) != w && key[n] == w + 1 -> st = S_HELD_BEHIND
  :: first_listed(n) != w && key[n] != w + 1 -> st = S_BEHIND
  fi;
  if
  :: st != S_GRANTED -> claims[n] = claims[n] | (1 << w)
  :: else -> skip
  fi;
  ep = (st == S_GRANTED -> kep[n] : 0);
  note_record(n, w);
  st = 0; ep = 0
}

proctype Node(byte n) {
  byte op, r, st, f, ep;
end:
  do
  :: atomic { req[0 * N + n]?op, r ->
       if
       :: op == Q_RECORD -> record(n, 0)
       :: else -> fair_release(n, 1, 0)
       fi;
       op = 0; r = 0 }
  :: atomic { req[1 * N + n]?op, r ->
       if
       :: op == Q_RECORD -> record(n, 1)
       :: else -> fair_release(n, 2, 1)
       fi;
       op = 0; r = 0 }
  :: atomic { !hreleased[n] -> hreleased[n] = 1; fair_release(n, H_VALUE, 255) }
  od
}

proctype Waiter(byte w) {
  byte ep;
end:
  do
  /* once it holds, the claim is the lock: no more records, and late
     answers and grants are not counted (AcquireOperation::succeed) */
  :: atomic {
       !held[w] && myr[w] < (w == 0 -> AROUNDS : ROUNDS) ->
       /* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::record_again */
       if
       :: myr[w] == 0 && w == 1 ->
          a_first = (((listed[0] & 1) + (listed[1] & 1) + (listed[2] & 1)) >= MAJ)
       :: else -> skip
       fi;
       myr[w]++;
       req[w * N + 0]!Q_RECORD, myr[w];
       req[w * N + 1]!Q_RECORD, myr[w];
       req[w * N + 2]!Q_RECORD, myr[w]
     }
  :: atomic { !held[w] && nempty(sub[w * N + 0]) -> sub[w * N + 0]?ep -> heard(0, w); ep = 0 }
  :: atomic { !held[w] && nempty(sub[w * N + 1]) -> sub[w * N + 1]?ep -> heard(1, w); ep = 0 }
  :: atomic { !held[w] && nempty(sub[w * N + 2]) -> sub[w * N + 2]?ep -> heard(2, w); ep = 0 }
  od
}

init {
  atomic {
    key[0] = H_VALUE; key[1] = H_VALUE; key[2] = H_VALUE;
    run Node(0); run Node(1); run Node(2);
    run Waiter(0); run Waiter(1)
  }
}
