/*
 * A set's turn: two sets over the resources a and c, {a, c} and {c, a} in
 * the caller's order, and a single-resource client on each of a and c.
 * docs/model.md describes the abstraction and the bounds.
 *
 * Each resource is one abstract node: its lock key and its fair line, a
 * FIFO of places in ticket order (a single node's arrival order stands for
 * the tickets a quorum draws; fair.pml checks the quorum's line). Each
 * client step on a resource is one atomic script call. Time is not
 * modelled: no key, place or claim lapses, so no renewal is needed.
 *
 * A set first tries acquire_all (every member free: all taken at once,
 * the lines not looked at). Refused, it takes its members one at a time in
 * byte order of their names (a before c), each as a fair waiter in that
 * member's line, holding those it has while it waits for the next; then
 * adopt_all makes them one lock (the set's value on every member key), the
 * members' own locks are released (on the adopted keys that changes
 * nothing), and release_all frees every member and serves each one's
 * line. Each set acquires once. A single client takes its resource ROUNDS
 * times as a fair waiter (fair = true, or a default acquire once it has
 * turned fair), never waiting while it holds anything.
 *
 * A fair waiter's attempt is granted when the key is free and the line is
 * empty, else it records its place at the end of the line, with a claim
 * or without one (chosen freely: a waiter without a claim stands for a
 * quorum with min_replicas, where waiters make no claims, and for the
 * moment between a claim's give-back and the record that brings its new
 * one). A release serves the line's first place: a claim is granted (the
 * key set to its value in the release's step); a place without a claim is
 * named, the key stays free, and its waiter's next attempt takes it.
 *
 * Properties (assertions):
 *   exclusion     never two clients holding one resource
 *   order_promise once a set's place in a member's line is recorded, no
 *                 other client acquires that member twice before the set
 *                 does (C17)
 *   one_lock      adopt_all finds every member key held by the set's own
 *                 member lock (or the set's value, or free)
 *   no_deadlock   whenever no step is possible, every client has finished
 *                 (every set waiter was served). Every loop of the model is
 *                 bounded, so every run is finite: a waiter never served
 *                 ends in such a state.
 *
 * Mutant switches: -DMUTANT_CALLER_ORDER (a set takes its members in the
 * caller's order), -DMUTANT_SINGLE_IGNORES_LINE (a single client's acquire
 * is the plain SET NX: it takes the key whenever free, even while a set is
 * first in line, and never records a place), -DMUTANT_NO_ADOPT (a set
 * releases its members' own locks without adopt_all).
 */

#define NR    2             /* resources: a = 0, c = 1 (their names' byte order) */
#define NC    4             /* clients: sets 0 and 1, single 2 on a, single 3 on c */
#define SETV  5             /* set s's value is SETV + s; client c's own lock value c + 1 */
#ifndef ROUNDS
#define ROUNDS 2            /* acquisitions of each single client */
#endif

chan line[NR] = [3] of { byte, bool };   /* places: client, claim */

byte key[NR];         /* the lock key's value, 0 free */
byte done;            /* clients finished */

/* ghosts */
byte holds[NR];       /* the clients holding each resource: bit c */
byte placed[NR];      /* the sets whose place in the resource's line is recorded: bit s */
byte since[NR * 2 * NC];  /* [r][s][o]: o's acquisitions of r since set s's place */
hidden byte exclusion, order_promise, one_lock, no_deadlock;

inline count_since(kr, kc, ks) {
  if
  :: ((placed[kr] >> ks) & 1) && ks != kc ->
     since[kr * 2 * NC + ks * NC + kc]++;
     order_promise = (since[kr * 2 * NC + ks * NC + kc] < 2);
     assert(order_promise)
  :: else -> skip
  fi
}

/* Client ac acquires resource ar (noted in the step that grants it). */
inline acquired(ar, ac) {
  exclusion = (holds[ar] == 0);
  assert(exclusion);
  holds[ar] = 1 << ac;
  if
  :: ac < 2 ->
     placed[ar] = placed[ar] & ~(1 << ac);
     since[ar * 2 * NC + ac * NC + 0] = 0; since[ar * 2 * NC + ac * NC + 1] = 0;
     since[ar * 2 * NC + ac * NC + 2] = 0; since[ar * 2 * NC + ac * NC + 3] = 0
  :: else -> skip
  fi;
  count_since(ar, ac, 0);
  count_since(ar, ac, 1)
}

/* The line's first place served, the key just freed: its claim granted,
   or, without a claim, the waiter named (the key stays free). */
/* mirrors: lib/scripts/fair_scripts.cpp serve_queue */
inline serve(sr) {
  if
  :: len(line[sr]) > 0 ->
     line[sr]?<h, hc>;
     if
     :: hc -> line[sr]?h, hc; key[sr] = h + 1; acquired(sr, h)
     :: else -> skip
     fi
  :: else -> skip
  fi;
  h = 0; hc = 0
}

/* The release of value lv on lr: compare-and-delete, then the line served.
   (The ghost holds is the releasing client's to clear.) */
/* mirrors: lib/scripts/fair_scripts.cpp kFairReleaseBody */
inline release(lr, lv) {
  if
  :: key[lr] == lv -> key[lr] = 0; serve(lr)
  :: else -> skip
  fi
}

/* A fair acquire of fr by client fc: its attempt, granted when the key is
   free and the line empty, else its place recorded (with a claim or
   without); then it waits until a release grants its claim, or, named
   without one, until its attempt finds the key free with itself first. */
/* mirrors: lib/scripts/fair_scripts.cpp kFairAcquireBody */
/* mirrors: lib/scripts/fair_scripts.cpp kTicketEnqueueBody */
/* mirrors: lib/operations/acquire_waiting.cpp AcquireOperation::claims */
inline fair_take(fr, fc) {
  atomic {
    if
    :: key[fr] == 0 && len(line[fr]) == 0 -> key[fr] = fc + 1; acquired(fr, fc)
    :: else ->
       if :: cl = 1 :: cl = 0 fi;
       line[fr]!fc, cl;
       if :: fc < 2 -> placed[fr] = placed[fr] | (1 << fc) :: else -> skip fi
    fi
  };
  atomic {
    if
    :: key[fr] == fc + 1 -> skip
    :: key[fr] == 0 && line[fr]?[eval(fc), 0] ->
       line[fr]?eval(fc), 0; key[fr] = fc + 1; acquired(fr, fc)
    fi;
    cl = 0
  }
}

/* mirrors: lib/operations/set_turn_operation.hpp SetTurnOperation */
proctype Set(byte s; byte r0; byte r1) {   /* r0, r1: the members in the caller's order */
  byte m0, m1, cl, h, hc;
  /* the order of the members' names */
  /* mirrors: lib/operations/set_turn_operation.cpp order_ */
#ifdef MUTANT_CALLER_ORDER
  m0 = r0; m1 = r1;
#else
  if :: r0 < r1 -> m0 = r0; m1 = r1 :: else -> m0 = r1; m1 = r0 fi;
#endif
  /* the first attempt: SET NX on every member, all or none */
  /* mirrors: lib/operations/set_turn_operation.cpp SetTurnOperation::on_first_attempt */
  /* mirrors: lib/scripts/kind_scripts.cpp kAcquireAllBody */
  atomic {
    if
    :: key[0] == 0 && key[1] == 0 ->
       key[0] = SETV + s; key[1] = SETV + s;
       acquired(0, s); acquired(1, s);
       goto holding
    :: else -> skip
    fi
  };
  /* mirrors: lib/operations/set_turn_operation.cpp SetTurnOperation::take_next */
  fair_take(m0, s);
  fair_take(m1, s);
#ifndef MUTANT_NO_ADOPT
  /* mirrors: lib/operations/set_turn_operation.cpp SetTurnOperation::adopt */
  /* mirrors: lib/scripts/kind_scripts.cpp kAdoptAllBody */
  atomic {
    one_lock = (key[0] == s + 1 || key[0] == SETV + s || key[0] == 0) &&
               (key[1] == s + 1 || key[1] == SETV + s || key[1] == 0);
    assert(one_lock);
    key[0] = SETV + s; key[1] = SETV + s
  };
#endif
  /* the members' own locks released: where adopted, nothing to delete */
  /* mirrors: lib/operations/set_turn_operation.cpp SetTurnOperation::release_held */
  atomic { release(m0, s + 1) };
  atomic { release(m1, s + 1) };
holding:
  /* mirrors: lib/scripts/kind_scripts.cpp kReleaseAllBody */
  atomic {
    holds[0] = holds[0] & ~(1 << s); holds[1] = holds[1] & ~(1 << s);
    release(0, SETV + s); release(1, SETV + s);
    done++
  }
}

/* mirrors: lib/operations/acquire_operation.cpp AcquireOperation::become_fair */
proctype Single(byte c; byte r) {
  byte n, cl, h, hc;
  do
  :: n < ROUNDS ->
#ifdef MUTANT_SINGLE_IGNORES_LINE
     /* mirrors: lib/scripts/scripts.cpp kAcquireBatch */
     atomic { key[r] == 0 -> key[r] = c + 1; acquired(r, c) };
#else
     fair_take(r, c);
#endif
     atomic { holds[r] = holds[r] & ~(1 << c); release(r, c + 1) };
     n++
  :: else -> break
  od;
  done++
}

init {
  atomic {
    run Set(0, 0, 1);     /* {a, c} */
    run Set(1, 1, 0);     /* {c, a} */
    run Single(2, 0);
    run Single(3, 1)
  };
  timeout ->
  no_deadlock = (done == NC);
  assert(no_deadlock)
}
