import type { Node, Pair } from 'yaml';

// The yaml library checks key uniqueness by comparing each new key with every key already in its
// map: O(n²), 15 s for a 50 000-key datadog.yaml. We parse with that check off and do the same check
// here with one Set per map: every node is visited once.

interface DuplicateKeyScan {
  /** Source offset of the first key that repeats an earlier key of the same map. */
  duplicateAt?: number;
  /** Nodes visited (the test asserts this grows linearly with the input). */
  visited: number;
}

interface YamlNodeTypes {
  isMap(node: unknown): node is { items: Pair[] };
  isSeq(node: unknown): node is { items: unknown[] };
  isScalar(node: unknown): node is { value: unknown; range?: [number, number, number] | null };
}

/** Finds a repeated scalar key in any mapping (same rule as the library: equal scalar values). */
export function findDuplicateKey(root: Node | null | undefined, types: YamlNodeTypes): DuplicateKeyScan {
  const scan: DuplicateKeyScan = { visited: 0 };
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    scan.visited++;
    if (types.isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        if (types.isScalar(key) && key.value !== '<<') {
          if (seen.has(key.value) && scan.duplicateAt === undefined) scan.duplicateAt = key.range?.[0] ?? 0;
          seen.add(key.value);
        }
        if (pair.key && !types.isScalar(pair.key)) stack.push(pair.key);
        stack.push(pair.value);
      }
    } else if (types.isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
  return scan;
}
