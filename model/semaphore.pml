/*
 * The semaphore: K = 2 permits, N = 3 nodes, 3 clients, one attempt each.
 * docs/model.md describes the abstraction and the bounds. Time is not
 * modelled (no permit key expires while its attempt or hold runs).
 *
 * Each attempt sends permit_acquire to every node with the permit to try
 * first (chosen freely per attempt, as the attempt's random value chooses
 * it); a node grants the first free permit from there. A permit held by a
 * majority is the client's; a lost attempt undoes its grants (the release
 * of its value on every node), a holder may release.
 *
 * Messages: one FIFO request channel per client-node connection, served
 * in any order across connections; an answer is counted when the node
 * answers, if its round is still undecided (later answers are dropped).
 *
 * Properties (assertions):
 *   at_most_k_holders   never more than K clients hold a permit
 *   permit_held_once    no permit is held by two clients at once
 *
 * Mutant switch: -DMUTANT_PERMIT_NO_NX (a node grants a permit held by
 * another value: SET without NX).
 */

#define N    3
#define MAJ  2
#define K    2
#define NC   3

#define Q_ACQ 1
#define Q_REL 2

chan req[NC * N] = [2] of { byte, byte };   /* op, first permit to try */

byte pk[N * K];        /* the value holding each permit key on each node, 0 = free */

byte open[NC];         /* the client's round is open */
byte answered[NC];
byte grants[NC * K];   /* grants per permit in the open round */

byte held[NC];         /* permit + 1 while held */
hidden byte at_most_k_holders, permit_held_once;

/* mirrors: lib/scripts/kind_scripts.cpp kPermitAcquireBody */
inline permit_acquire(n, c, first) {
  p = 255; step = 0;
  do
  :: step < K && p == 255 ->
     q = (first + step) % K;
#ifdef MUTANT_PERMIT_NO_NX
     if
     :: pk[n * K + q] == 0 || pk[n * K + q] != c + 1 -> pk[n * K + q] = c + 1; p = q
     :: else -> skip
     fi;
#else
     if
     :: pk[n * K + q] == 0 -> pk[n * K + q] = c + 1; p = q
     :: else -> skip
     fi;
#endif
     step++
  :: else -> break
  od;
  /* mirrors: lib/protocol/permit_tally.cpp PermitTally::grant */
  if
  :: open[c] ->
     answered[c]++;
     if :: p != 255 -> grants[c * K + p]++ :: else -> skip fi
  :: else -> skip
  fi;
  p = 0; q = 0; step = 0
}

/* mirrors: lib/scripts/scripts.cpp kReleaseBatch */
inline permit_release(n, c) {
  q = 0;
  do
  :: q < K -> if :: pk[n * K + q] == c + 1 -> pk[n * K + q] = 0 :: else -> skip fi; q++
  :: else -> break
  od;
  q = 0
}

proctype Node(byte n) {
  byte op, first, p, q, step;
end:
  do
  :: atomic { req[0 * N + n]?op, first ->
       if :: op == Q_ACQ -> permit_acquire(n, 0, first) :: else -> permit_release(n, 0) fi;
       op = 0; first = 0 }
  :: atomic { req[1 * N + n]?op, first ->
       if :: op == Q_ACQ -> permit_acquire(n, 1, first) :: else -> permit_release(n, 1) fi;
       op = 0; first = 0 }
  :: atomic { req[2 * N + n]?op, first ->
       if :: op == Q_ACQ -> permit_acquire(n, 2, first) :: else -> permit_release(n, 2) fi;
       op = 0; first = 0 }
  od
}

#define won_permit(c, p) (grants[c * K + p] >= MAJ)
/* lost: no permit can still reach a majority with the answers to come */
#define lost(c) (grants[c * K + 0] + N - answered[c] < MAJ && grants[c * K + 1] + N - answered[c] < MAJ)

proctype Client(byte c) {
  byte first, p, o, holders;
  /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::send_attempt */
  atomic {
    if :: first = 0 :: first = 1 fi;
    open[c] = 1;
    req[c * N + 0]!Q_ACQ, first;
    req[c * N + 1]!Q_ACQ, first;
    req[c * N + 2]!Q_ACQ, first;
    first = 0
  }
  /* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::decide */
  /* mirrors: lib/protocol/permit_tally.cpp PermitTally::winner */
  atomic {
    (won_permit(c, 0) || won_permit(c, 1) || lost(c)) ->
    if
    :: won_permit(c, 0) -> p = 1
    :: won_permit(c, 1) -> p = 2
    :: else -> p = 0
    fi;
    open[c] = 0; answered[c] = 0; grants[c * K + 0] = 0; grants[c * K + 1] = 0;
    if
    :: p != 0 ->
       holders = 1; o = 0;
       do
       :: o < NC ->
          if
          :: o != c && held[o] != 0 ->
             holders++;
             permit_held_once = (held[o] != p);
             assert(permit_held_once)
          :: else -> skip
          fi;
          o++
       :: else -> break
       od;
       at_most_k_holders = (holders <= K);
       assert(at_most_k_holders);
       held[c] = p; o = 0; holders = 0
    :: else -> skip
    fi
  }
  /* a holder releases when it will; a lost attempt undoes its grants */
  atomic {
    held[c] = 0;
    req[c * N + 0]!Q_REL, 0;
    req[c * N + 1]!Q_REL, 0;
    req[c * N + 2]!Q_REL, 0;
    p = 0
  }
}

init {
  atomic {
    run Node(0); run Node(1); run Node(2);
    run Client(0); run Client(1); run Client(2)
  }
}
