import { describe, expect, test } from "bun:test";
import { AdmissionCancelled, createGate, lendAll, type Gate, type Lease } from "./slots.ts";

/** A signal that never aborts. */
const live = () => new AbortController().signal;

/** Lets every pending microtask and timer callback run (a few macrotask turns). */
async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** Whether a promise has settled yet, without waiting for it. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await settle();
  return settled;
}

/** A promise with its resolve exposed. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("capacity", () => {
  test("many concurrent acquirers never hold more slots than the capacity, and all of them run", async () => {
    const capacity = 3;
    const gate = createGate(capacity);
    let running = 0;
    let mostRunning = 0;
    let finished = 0;
    const worker = async (index: number) => {
      const lease = await gate.acquire(live());
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      expect(gate.inUse).toBeLessThanOrEqual(capacity);
      // Uneven work: some finish in a microtask, some after timers.
      if (index % 3 === 0) await settle(1 + (index % 4));
      else await Promise.resolve();
      running -= 1;
      finished += 1;
      lease.release();
    };
    await Promise.all(Array.from({ length: 50 }, (_, index) => worker(index)));
    expect(finished).toBe(50);
    expect(mostRunning).toBe(capacity);
    expect(gate.peak).toBe(capacity);
    expect(gate.inUse).toBe(0);
  });

  test("waiters that give up while others run do not disturb the count", async () => {
    const gate = createGate(2);
    let running = 0;
    let mostRunning = 0;
    const outcomes: string[] = [];
    const jobs = Array.from({ length: 30 }, async (_, index) => {
      const controller = new AbortController();
      if (index % 4 === 3) setTimeout(() => controller.abort(), 0);
      try {
        const lease = await gate.acquire(controller.signal);
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        await settle(1);
        running -= 1;
        lease.release();
        outcomes.push("ran");
      } catch (error) {
        expect(error).toBeInstanceOf(AdmissionCancelled);
        outcomes.push("cancelled");
      }
    });
    await Promise.all(jobs);
    expect(outcomes).toHaveLength(30);
    expect(outcomes.filter((o) => o === "cancelled").length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o === "ran").length).toBeGreaterThan(0);
    expect(mostRunning).toBeLessThanOrEqual(2);
    expect(gate.peak).toBe(2);
    expect(gate.inUse).toBe(0);
  });

  test("inUse and peak follow acquisitions and releases", async () => {
    const gate = createGate(2);
    expect([gate.inUse, gate.peak]).toEqual([0, 0]);
    const a = await gate.acquire(live());
    expect([gate.inUse, gate.peak]).toEqual([1, 1]);
    const b = await gate.acquire(live());
    expect([gate.inUse, gate.peak]).toEqual([2, 2]);
    a.release();
    b.release();
    expect([gate.inUse, gate.peak]).toEqual([0, 2]);
  });

  test("a full gate makes the next acquirer wait until a slot is released", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const next = gate.acquire(live());
    expect(await isSettled(next)).toBe(false);
    expect(gate.inUse).toBe(1);
    holder.release();
    const lease = await next;
    expect(gate.inUse).toBe(1);
    lease.release();
    expect(gate.inUse).toBe(0);
  });
});

describe("wake order", () => {
  test("waiters are admitted first in, first out", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const order: string[] = [];
    const names = ["a", "b", "c", "d", "e"];
    const waiters = names.map((name) =>
      gate.acquire(live()).then((lease) => {
        order.push(name);
        lease.release();
      }),
    );
    await settle();
    expect(order).toEqual([]);
    holder.release();
    await Promise.all(waiters);
    expect(order).toEqual(names);
    expect(gate.inUse).toBe(0);
  });

  test("a newcomer does not overtake queued waiters when a slot frees", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const order: string[] = [];
    const queued = gate.acquire(live()).then((lease) => {
      order.push("queued");
      return lease;
    });
    await settle();
    holder.release();
    // Arrives after the release, while the queued waiter's wake-up is still pending.
    const late = gate.acquire(live()).then((lease) => {
      order.push("late");
      return lease;
    });
    (await queued).release();
    (await late).release();
    expect(order).toEqual(["queued", "late"]);
  });
});

describe("cancellation", () => {
  test("aborting while waiting rejects with AdmissionCancelled and frees nothing", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    await settle();
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AdmissionCancelled);
    expect(gate.inUse).toBe(1);
    // The holder still holds its slot: a new acquirer must still wait.
    const next = gate.acquire(live());
    expect(await isSettled(next)).toBe(false);
    holder.release();
    const lease = await next;
    expect(gate.inUse).toBe(1);
    lease.release();
    expect(gate.inUse).toBe(0);
    expect(gate.peak).toBe(1);
  });

  test("a cancelled waiter is skipped: the slot goes to the one behind it, and never to nobody", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const controller = new AbortController();
    const first = gate.acquire(controller.signal);
    const second = gate.acquire(live());
    controller.abort();
    await expect(first).rejects.toBeInstanceOf(AdmissionCancelled);
    holder.release();
    const lease = await second;
    expect(gate.inUse).toBe(1);
    lease.release();
    expect(gate.inUse).toBe(0);
  });

  test("after the only waiter cancels, a release empties the gate", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AdmissionCancelled);
    holder.release();
    expect(gate.inUse).toBe(0);
  });

  test("an already aborted signal is refused even with free slots", async () => {
    const gate = createGate(2);
    const controller = new AbortController();
    controller.abort();
    await expect(gate.acquire(controller.signal)).rejects.toBeInstanceOf(AdmissionCancelled);
    expect([gate.inUse, gate.peak]).toEqual([0, 0]);
    const lease = await gate.acquire(live());
    expect(gate.inUse).toBe(1);
    lease.release();
  });

  test("aborting after admission changes nothing", async () => {
    const gate = createGate(1);
    const controller = new AbortController();
    const lease = await gate.acquire(controller.signal);
    controller.abort();
    await settle();
    expect(gate.inUse).toBe(1);
    lease.release();
    expect(gate.inUse).toBe(0);
  });
});

describe("release", () => {
  test("releasing twice gives back one slot", async () => {
    const gate = createGate(2);
    const a = await gate.acquire(live());
    const b = await gate.acquire(live());
    a.release();
    a.release();
    expect(gate.inUse).toBe(1);
    b.release();
    expect(gate.inUse).toBe(0);
  });

  test("releasing twice wakes one waiter, not two", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const admitted: string[] = [];
    const one = gate.acquire(live()).then((lease) => (admitted.push("one"), lease));
    const two = gate.acquire(live()).then((lease) => (admitted.push("two"), lease));
    holder.release();
    holder.release();
    await settle();
    expect(admitted).toEqual(["one"]);
    expect(gate.inUse).toBe(1);
    (await one).release();
    (await two).release();
    expect(admitted).toEqual(["one", "two"]);
    expect(gate.inUse).toBe(0);
  });
});

describe("lending", () => {
  test("a waiter runs in the lent slot during the work, and the lender holds it again after", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const waiterDone = deferred();
    const waiter = gate.acquire(live()).then(async (lease) => {
      expect(gate.inUse).toBe(1);
      await waiterDone.promise;
      lease.release();
    });
    expect(await isSettled(waiter)).toBe(false);
    const result = await holder.lend(async () => {
      waiterDone.resolve();
      await waiter;
      expect(gate.inUse).toBe(0);
      return "done";
    });
    expect(result).toBe("done");
    expect(gate.inUse).toBe(1);
    expect(gate.peak).toBe(1);
    // The lender holds the slot again: another acquirer has to wait for it.
    const next = gate.acquire(live());
    expect(await isSettled(next)).toBe(false);
    holder.release();
    (await next).release();
    expect(gate.inUse).toBe(0);
  });

  test("taking the slot back waits for whoever got it meanwhile", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const borrowerStarted = deferred<Lease>();
    const lent = holder.lend(async () => {
      borrowerStarted.resolve(await gate.acquire(live()));
    });
    const borrower = await borrowerStarted.promise;
    // The work is over, but the borrower still has the slot.
    expect(await isSettled(lent)).toBe(false);
    expect(gate.inUse).toBe(1);
    borrower.release();
    await lent;
    expect(gate.inUse).toBe(1);
    holder.release();
    expect(gate.inUse).toBe(0);
  });

  test("the slot is taken back even when the work throws", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const failure = new Error("child failed");
    await expect(
      holder.lend(async () => {
        expect(gate.inUse).toBe(0);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(gate.inUse).toBe(1);
    const next = gate.acquire(live());
    expect(await isSettled(next)).toBe(false);
    holder.release();
    (await next).release();
    expect(gate.inUse).toBe(0);
  });

  test("a released lease lends nothing and takes nothing back", async () => {
    const gate = createGate(1);
    const lease = await gate.acquire(live());
    lease.release();
    const value = await lease.lend(async () => {
      expect(gate.inUse).toBe(0);
      return 7;
    });
    expect(value).toBe(7);
    expect(gate.inUse).toBe(0);
  });

  test("released during the lent work: nothing is given twice and nothing is taken back", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const borrowed = deferred<Lease>();
    const lent = holder.lend(async () => {
      const borrower = await gate.acquire(live());
      // The holder ends while lending: this must not free the borrower's slot.
      holder.release();
      expect(gate.inUse).toBe(1);
      borrowed.resolve(borrower);
      return "over";
    });
    const borrower = await borrowed.promise;
    // The lender does not wait to take back a slot it no longer wants.
    expect(await lent).toBe("over");
    expect(gate.inUse).toBe(1);
    borrower.release();
    expect(gate.inUse).toBe(0);
    holder.release();
    expect(gate.inUse).toBe(0);
    const lease = await gate.acquire(live());
    expect(gate.inUse).toBe(1);
    lease.release();
  });

  test("released while the take-back waits: the slot it gets goes straight on", async () => {
    const gate = createGate(1);
    const holder = await gate.acquire(live());
    const borrowed = deferred<Lease>();
    const lent = holder.lend(async () => {
      borrowed.resolve(await gate.acquire(live()));
    });
    const borrower = await borrowed.promise;
    // The work is over; the take-back is queued behind the borrower.
    expect(await isSettled(lent)).toBe(false);
    holder.release();
    expect(gate.inUse).toBe(1);
    const next = gate.acquire(live());
    borrower.release();
    await lent;
    // The take-back found the lease released and passed the slot on to the next waiter.
    const lease = await next;
    expect(gate.inUse).toBe(1);
    lease.release();
    expect(gate.inUse).toBe(0);
  });

  test("lendAll gives back both leases during the work and takes both back after", async () => {
    const concurrency = createGate(1);
    const writer = createGate(1);
    const leases = [await writer.acquire(live()), await concurrency.acquire(live())];
    const seen: number[][] = [];
    const result = await lendAll(leases, async () => {
      seen.push([writer.inUse, concurrency.inUse]);
      // Someone else can hold both while they are lent.
      const w = await writer.acquire(live());
      const c = await concurrency.acquire(live());
      seen.push([writer.inUse, concurrency.inUse]);
      c.release();
      w.release();
      return "ok";
    });
    expect(result).toBe("ok");
    expect(seen).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect([writer.inUse, concurrency.inUse]).toEqual([1, 1]);
    for (const lease of leases) lease.release();
    expect([writer.inUse, concurrency.inUse]).toEqual([0, 0]);
  });

  test("lendAll takes both back when the work throws", async () => {
    const a = createGate(1);
    const b = createGate(1);
    const leases = [await a.acquire(live()), await b.acquire(live())];
    await expect(
      lendAll(leases, async () => {
        expect([a.inUse, b.inUse]).toEqual([0, 0]);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect([a.inUse, b.inUse]).toEqual([1, 1]);
    for (const lease of leases) lease.release();
    expect([a.inUse, b.inUse]).toEqual([0, 0]);
  });

  test("lendAll with no leases just runs the work", async () => {
    expect(await lendAll([], async () => 3)).toBe(3);
  });
});

describe("nested delegation", () => {
  /** A run holding a slot that starts a child needing a slot of its own and waits for it. */
  async function child(gate: Gate, signal: AbortSignal, work: (lease: Lease) => Promise<void> = async () => {}): Promise<string> {
    const lease = await gate.acquire(signal);
    try {
      await work(lease);
      return "child done";
    } finally {
      lease.release();
    }
  }

  test("without lending, a holder waiting on its child never lets the child start (capacity 1)", async () => {
    const gate = createGate(1);
    const parent = await gate.acquire(live());
    const controller = new AbortController();
    const running = child(gate, controller.signal);
    // The child cannot start while the parent sits on the only slot: this is the deadlock.
    expect(await isSettled(running)).toBe(false);
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(AdmissionCancelled);
    expect(gate.inUse).toBe(1);
    parent.release();
  });

  test("lending while waiting lets the child run, and the parent resumes with its slot", async () => {
    const gate = createGate(1);
    const parent = await gate.acquire(live());
    const outcome = await parent.lend(() => child(gate, live()));
    expect(outcome).toBe("child done");
    expect(gate.inUse).toBe(1);
    expect(gate.peak).toBe(1);
    parent.release();
    expect(gate.inUse).toBe(0);
  });

  test("three levels deep on one slot: each level lends while it waits for the next", async () => {
    const gate = createGate(1);
    const order: string[] = [];
    const root = await gate.acquire(live());
    order.push("root");
    await root.lend(() =>
      child(gate, live(), async (lease) => {
        order.push("child");
        await lease.lend(() =>
          child(gate, live(), async () => {
            order.push("grandchild");
          }),
        );
        order.push("child resumed");
      }),
    );
    order.push("root resumed");
    expect(order).toEqual(["root", "child", "grandchild", "child resumed", "root resumed"]);
    expect(gate.inUse).toBe(1);
    expect(gate.peak).toBe(1);
    root.release();
    expect(gate.inUse).toBe(0);
  });
});

describe("lendAll's take-back order", () => {
  test("leases come back in acquisition order: a sibling acquiring in that order can never hold one while the holder holds the other", async () => {
    const writer = createGate(1);
    const concurrency = createGate(1);
    // Acquired like a shared-write child: the writer gate first, then a concurrency slot.
    const held = [await writer.acquire(live()), await concurrency.acquire(live())];
    const trace: string[] = [];
    const holder = lendAll(held, async () => {}).then(() => {
      trace.push("holder resumed");
      for (const lease of held) lease.release();
    });
    // A sibling writer acquiring in the same order, polling for the moment one gate is back and the other is not.
    const sibling = (async () => {
      for (let spins = 0; spins < 10_000 && !(writer.inUse === 0 && concurrency.inUse === 1); spins++) await Promise.resolve();
      const w = await writer.acquire(live());
      const c = await concurrency.acquire(live());
      trace.push("sibling ran");
      c.release();
      w.release();
    })();
    await Promise.race([Promise.all([holder, sibling]), Bun.sleep(500)]);
    expect(trace).toContain("holder resumed");
    expect(trace).toContain("sibling ran");
  });
});
