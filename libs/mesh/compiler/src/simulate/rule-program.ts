// Compiled RBAC rules as a compact program. Permissions and principals are first built as trees
// of `RuleNode`s over interned leaf tests (an `RbacCompiler` gives identical leaf matchers one
// slot), then emitted into one Int32Array per engine: each node is three integers — operation,
// the offset just past its subtree, an argument — followed by its children. Evaluation walks that
// array: dense, no property lookups, no closure calls except leaf tests, and a leaf test runs at
// most once per pass because its result is kept in a `LeafMemo`.
import type { RbacAttributes } from './rbac-engine';

/** A leaf test on a request. */
export type Leaf = (attributes: RbacAttributes) => boolean;

/** Per-pass leaf results, by slot: 0 not computed yet, 1 matched, 2 not matched. */
export type LeafMemo = Uint8Array;

const LEAF = 0;
const DIRECT = 1;
const AND = 2;
const OR = 3;
const NOT = 4;
const TRUE = 5;
const FALSE = 6;

/** One node of a permission or principal before emission. */
export class RuleNode {
  private constructor(
    readonly op: number,
    /** Leaf: memo slot; direct: index of the test in `direct`. */
    readonly arg: number,
    readonly children: readonly RuleNode[],
    /** Direct: a test evaluated every time (metadata, refused constructs). */
    readonly direct: Leaf | undefined,
  ) {}

  static readonly TRUE = new RuleNode(TRUE, 0, [], undefined);
  static readonly FALSE = new RuleNode(FALSE, 0, [], undefined);

  static leaf(slot: number): RuleNode {
    return new RuleNode(LEAF, slot, [], undefined);
  }

  /** A test kept out of the memo: its result may change during a pass, or it throws. */
  static direct(test: Leaf): RuleNode {
    return new RuleNode(DIRECT, 0, [], test);
  }

  static and(children: readonly RuleNode[]): RuleNode {
    return children.length === 1 ? (children[0] as RuleNode) : new RuleNode(AND, 0, children, undefined);
  }

  static or(children: readonly RuleNode[]): RuleNode {
    return children.length === 1 ? (children[0] as RuleNode) : new RuleNode(OR, 0, children, undefined);
  }

  static not(child: RuleNode): RuleNode {
    return new RuleNode(NOT, 0, [child], undefined);
  }
}

/**
 * Leaf tests by key, shared by every compiler: workloads of a mesh repeat the same matchers, and
 * one closure per distinct matcher keeps the working set small when many workloads are simulated
 * in turn. Bounded; cleared when full (a later compile then builds its tests again).
 */
const MAX_SHARED_LEAF_TESTS = 16_384;
const sharedLeafTests = new Map<string, Leaf>();

function sharedLeafTest(key: string, build: () => Leaf): Leaf {
  let test = sharedLeafTests.get(key);
  if (test === undefined) {
    test = build();
    if (sharedLeafTests.size >= MAX_SHARED_LEAF_TESTS) sharedLeafTests.clear();
    sharedLeafTests.set(key, test);
  }
  return test;
}

/**
 * Compiles RBAC messages evaluated together (the filters of one listener), interning identical
 * leaf matchers so that one pass computes each at most once.
 */
export class RbacCompiler {
  private readonly slots = new Map<string, number>();
  private scratch: LeafMemo = new Uint8Array(0);
  /** Leaf tests by slot. */
  readonly tests: Leaf[] = [];

  /** The node of a memoized leaf; `key` identifies the leaf (attribute and matcher). */
  leaf(key: string, build: () => Leaf): RuleNode {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.tests.length;
      this.slots.set(key, slot);
      this.tests.push(sharedLeafTest(key, build));
    }
    return RuleNode.leaf(slot);
  }

  /** A fresh memo for one pass over engines of this compiler. */
  newMemo(): LeafMemo {
    return new Uint8Array(this.tests.length);
  }

  /**
   * The compiler's own memo, cleared, for a pass that completes before the next one starts
   * (evaluation is synchronous and never re-entered): no allocation per request.
   */
  resetMemo(): LeafMemo {
    if (this.scratch.length !== this.tests.length) this.scratch = new Uint8Array(this.tests.length);
    else this.scratch.fill(0);
    return this.scratch;
  }
}

/** Emitted rules: the code and the direct tests it refers to. */
export interface RuleProgram {
  readonly code: Int32Array;
  readonly direct: readonly Leaf[];
}

/** Emits trees into one program; returns each root's offset. */
export function emitProgram(roots: readonly RuleNode[]): { program: RuleProgram; offsets: number[] } {
  const code: number[] = [];
  const direct: Leaf[] = [];
  const emit = (node: RuleNode): void => {
    const at = code.length;
    code.push(node.op, 0, node.op === DIRECT ? direct.length : node.arg);
    if (node.direct !== undefined) direct.push(node.direct);
    for (const child of node.children) emit(child);
    code[at + 1] = code.length;
  };
  const offsets = roots.map((root) => {
    const at = code.length;
    emit(root);
    return at;
  });
  return { program: { code: Int32Array.from(code), direct }, offsets };
}

/** Evaluates the node at `pc`; leaf results are read from and written to `memo`. */
export function runProgram(program: RuleProgram, pc: number, attributes: RbacAttributes, memo: LeafMemo, tests: readonly Leaf[]): boolean {
  const code = program.code;
  switch (code[pc]) {
    case LEAF: {
      const slot = code[pc + 2] as number;
      const known = memo[slot];
      if (known === 1) return true;
      if (known === 2) return false;
      const matched = (tests[slot] as Leaf)(attributes);
      memo[slot] = matched ? 1 : 2;
      return matched;
    }
    case DIRECT:
      return (program.direct[code[pc + 2] as number] as Leaf)(attributes);
    case AND: {
      const end = code[pc + 1] as number;
      for (let child = pc + 3; child < end; child = code[child + 1] as number) if (!runProgram(program, child, attributes, memo, tests)) return false;
      return true;
    }
    case OR: {
      const end = code[pc + 1] as number;
      for (let child = pc + 3; child < end; child = code[child + 1] as number) if (runProgram(program, child, attributes, memo, tests)) return true;
      return false;
    }
    case NOT:
      return !runProgram(program, pc + 3, attributes, memo, tests);
    case TRUE:
      return true;
    default:
      return false;
  }
}
