/**
 * Graph problems on generated undirected graphs with n nodes (numbered 0..n-1). Difficulty = n
 * (4..20). Each example asks one question (drawn at random, or fixed with `kind`):
 *
 * - `shortest-path`: edges carry weights 1..9; "what is the length of the shortest path from
 *   u to v?" (a path is guaranteed); answer the total weight.
 * - `connectivity`: "is there a path from u to v?"; yes and no are equally likely.
 * - `cycle`: "does the graph contain a cycle?"; yes and no are equally likely (a random forest,
 *   plus one extra edge inside a tree for "yes").
 *
 * Answers: an integer or yes/no, preferably in `<answer>…</answer>`. The verifier recomputes the
 * answer from the graph in `meta` (Dijkstra, union-find), so it never trusts the stored one.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { answerRegion, extractYesNo, fail, pass } from "./answer.ts";

/** The question kinds. */
export type GraphKind = "shortest-path" | "connectivity" | "cycle";
const KINDS: GraphKind[] = ["shortest-path", "connectivity", "cycle"];

/** Graph instance data kept in `Example.meta`. Edges are [u, v, weight]. */
export interface GraphMeta {
  kind: GraphKind;
  n: number;
  edges: [number, number, number][];
  from?: number;
  to?: number;
  [k: string]: unknown;
}

/** Shortest-path distance from s to t (Dijkstra, O(n^2)); Infinity when unreachable. */
export function shortestPath(n: number, edges: [number, number, number][], s: number, t: number): number {
  const dist = new Array(n).fill(Infinity);
  const done = new Array(n).fill(false);
  dist[s] = 0;
  for (let it = 0; it < n; it++) {
    let u = -1;
    for (let v = 0; v < n; v++) if (!done[v] && (u < 0 || dist[v] < dist[u])) u = v;
    if (u < 0 || dist[u] === Infinity) break;
    done[u] = true;
    for (const [a, b, w] of edges) {
      if (a === u && dist[u] + w < dist[b]) dist[b] = dist[u] + w;
      if (b === u && dist[u] + w < dist[a]) dist[a] = dist[u] + w;
    }
  }
  return dist[t];
}

function components(n: number, edges: [number, number, number][]): { find: (x: number) => number; hasCycle: boolean } {
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  let hasCycle = false;
  for (const [a, b] of edges) {
    const ra = find(a), rb = find(b);
    if (ra === rb) hasCycle = true;
    else parent[ra] = rb;
  }
  return { find, hasCycle };
}

/** The correct answer for a graph question, computed from scratch. */
export function solveGraph(meta: GraphMeta): string {
  if (meta.kind === "shortest-path") return String(shortestPath(meta.n, meta.edges, meta.from!, meta.to!));
  const c = components(meta.n, meta.edges);
  if (meta.kind === "connectivity") return c.find(meta.from!) === c.find(meta.to!) ? "yes" : "no";
  return c.hasCycle ? "yes" : "no";
}

/** Verify a response to a graph question. Never throws. */
export function verifyGraph(response: string, meta: GraphMeta): Verdict {
  const region = answerRegion(response);
  if (region === null) return fail("no answer found");
  const truth = solveGraph(meta);
  if (meta.kind === "shortest-path") {
    const nums = region.match(/-?\d+/g);
    if (!nums) return fail("no number found", region);
    const got = nums[nums.length - 1]!;
    return Number(got) === Number(truth) ? pass(got) : fail(`wrong length (expected ${truth})`, got);
  }
  const yn = extractYesNo(region);
  if (yn === null) return fail("no yes/no found", region);
  return yn === truth ? pass(yn) : fail(`wrong answer (expected ${truth})`, yn);
}

function randomTree(rng: Rng, nodes: number[], edges: [number, number, number][], weighted: boolean): void {
  for (let i = 1; i < nodes.length; i++) edges.push([nodes[rng.int(0, i - 1)]!, nodes[i]!, weighted ? rng.int(1, 9) : 1]);
}

/** Options for the graph task. */
export interface GraphOptions {
  /** Ask only this kind of question (default: one of the three at random per example). */
  kind?: GraphKind;
  name?: string;
}

/** Build the graph task. */
export function createGraphTask(opts: GraphOptions = {}): Task {
  const name = opts.name ?? "graph";
  const make = (rng: Rng, n: number) => {
    const kind = opts.kind ?? rng.pick(KINDS);
    const order = rng.shuffle(Array.from({ length: n }, (_, i) => i));
    const edges: [number, number, number][] = [];
    let from: number | undefined;
    let to: number | undefined;
    let question: string;
    if (kind === "shortest-path") {
      randomTree(rng, order, edges, true);
      const extra = rng.int(1, n);
      for (let k = 0; k < extra; k++) {
        const a = rng.int(0, n - 1), b = rng.int(0, n - 1);
        if (a !== b && !edges.some(([x, y]) => (x === a && y === b) || (x === b && y === a))) edges.push([a, b, rng.int(1, 9)]);
      }
      from = rng.int(0, n - 1);
      to = (from + rng.int(1, n - 1)) % n;
      question = `What is the length (total weight) of the shortest path from node ${from} to node ${to}? Answer with a number.`;
    } else if (kind === "connectivity") {
      // Two or more components; ask about a pair in the same or in different components.
      const split = rng.int(1, n - 1);
      const left = order.slice(0, split), right = order.slice(split);
      randomTree(rng, left, edges, false);
      randomTree(rng, right, edges, false);
      // Drop some edges to make more components.
      for (let k = edges.length - 1; k >= 0; k--) if (rng.chance(0.2)) edges.splice(k, 1);
      const c = components(n, edges);
      const want = rng.chance(0.5);
      const pairs: [number, number][] = [];
      for (let a = 0; a < n; a++) for (let b = a + 1; b < n; b++) if ((c.find(a) === c.find(b)) === want) pairs.push([a, b]);
      const pool = pairs.length > 0 ? pairs : [[0, 1] as [number, number]];
      [from, to] = rng.chance(0.5) ? rng.pick(pool) : (rng.pick(pool).slice().reverse() as [number, number]);
      question = `Is there a path from node ${from} to node ${to}? Answer yes or no.`;
    } else {
      // A forest of 1-3 trees; for "yes", one extra edge inside a tree closes a cycle.
      const trees = rng.int(1, Math.min(3, Math.floor(n / 2)));
      const cuts = rng.shuffle(Array.from({ length: n - 1 }, (_, i) => i + 1)).slice(0, trees - 1).sort((a, b) => a - b);
      let start = 0;
      const groups: number[][] = [];
      for (const c of [...cuts, n]) {
        groups.push(order.slice(start, c));
        start = c;
      }
      for (const g of groups) randomTree(rng, g, edges, false);
      if (rng.chance(0.5)) {
        const big = groups.filter((g) => g.length >= 3);
        if (big.length > 0) {
          const g = rng.pick(big);
          for (let t = 0; t < 50; t++) {
            const a = rng.pick(g), b = rng.pick(g);
            if (a !== b && !edges.some(([x, y]) => (x === a && y === b) || (x === b && y === a))) {
              edges.push([a, b, 1]);
              break;
            }
          }
        }
      }
      question = "Does this graph contain a cycle? Answer yes or no.";
    }
    const shuffled = rng.shuffle(edges).map(([a, b, w]) => (rng.chance(0.5) ? [b, a, w] : [a, b, w]) as [number, number, number]);
    const edgeText = shuffled.map(([a, b, w]) => (kind === "shortest-path" ? `${a}-${b} (${w})` : `${a}-${b}`)).join(", ");
    const prompt =
      `An undirected graph has nodes 0 to ${n - 1} and ${kind === "shortest-path" ? "weighted " : ""}edges: ${edgeText || "none"}.\n` +
      `${question} Put the answer in <answer></answer>.`;
    const meta: GraphMeta = { kind, n, edges: shuffled };
    if (from !== undefined) meta.from = from;
    if (to !== undefined) meta.to = to;
    const answer = solveGraph(meta);
    return { prompt, answer, solution: `<answer>${answer}</answer>`, meta };
  };
  return {
    name,
    difficulties: {
      min: 4,
      max: 20,
      default: 6,
      description: `number of nodes; questions: ${opts.kind ?? KINDS.join(", ")}`,
    },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 4, 20);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as GraphMeta | undefined;
      if (!meta || !Array.isArray(meta.edges) || !KINDS.includes(meta.kind)) return fail("example has no graph meta");
      return verifyGraph(response, meta);
    },
  };
}

/** Graph questions (shortest path, connectivity, cycle); difficulty = number of nodes. */
export const graphTask: Task = createGraphTask();
