import { createHash, randomBytes } from "node:crypto";
import {
  type DirectoryData,
  EntityType,
  type Path,
  type ProvenanceResult,
  type ProvenanceStorage,
  type RelationData,
  RelationType,
  type RevisionData,
  type Sha1,
} from "../src/index.js";

/** A fresh random id. */
export const randomId = (): Sha1 => randomBytes(20).toString("hex");

/** One write call, replayable on any storage. */
export type Call =
  | ["contentAdd", Map<Sha1, bigint>]
  | ["directoryAdd", Map<Sha1, DirectoryData>]
  | ["locationAdd", Path[]]
  | ["originAdd", Map<Sha1, string>]
  | ["revisionAdd", Map<Sha1, RevisionData> | Sha1[]]
  | ["relationAdd", RelationType, Map<Sha1, RelationData[]>];

/** Applies one call; resolves to what the write resolved to. */
export function apply(storage: ProvenanceStorage, call: Call): Promise<boolean> {
  switch (call[0]) {
    case "contentAdd":
      return storage.contentAdd(call[1]);
    case "directoryAdd":
      return storage.directoryAdd(call[1]);
    case "locationAdd":
      return storage.locationAdd(call[1]);
    case "originAdd":
      return storage.originAdd(call[1]);
    case "revisionAdd":
      return storage.revisionAdd(call[1]);
    case "relationAdd":
      return storage.relationAdd(call[1], call[2]);
  }
}

/** A deterministic pseudo-random generator (mulberry32). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generated history and everything the provenance index must answer about it. */
export interface Fixture {
  calls: Call[];
  contents: Sha1[];
  directories: Sha1[];
  revisions: Sha1[];
  origins: Sha1[];
  /** Expected `contentFindAll` per content (sorted as the storage must sort). */
  occurrences: Map<Sha1, ProvenanceResult[]>;
  /** Expected `contentFindFirst` per content. */
  first: Map<Sha1, ProvenanceResult | null>;
  /** Expected `contentGet`: the earliest date a content was seen at. */
  contentDates: Map<Sha1, bigint>;
}

const utf8 = (text: string) => Buffer.from(text);

/**
 * A small linear history: `revisions` revisions, each a root with a few files and a `lib` directory of
 * files, drawn from a pool of contents, so contents recur across revisions and directories; two origins.
 * Ids are salted with `salt` so several fixtures can live in one database. The expected answers are
 * computed from the history itself, not from any storage.
 */
export function generateFixture(
  options: { seed?: number; revisions?: number; contents?: number; salt?: string } = {},
): Fixture {
  const { seed = 1, revisions: revisionCount = 8, contents: contentCount = 24, salt = randomId() } = options;
  const random = generator(seed);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)] as T;
  const sha1 = (name: string) => createHash("sha1").update(`${salt}/${name}`).digest("hex");
  const contents = Array.from({ length: contentCount }, (_, i) => sha1(`content ${i}`));
  const origins = [sha1("origin 0"), sha1("origin 1")];
  const urls = new Map([
    [origins[0] as Sha1, "https://example.org/zeta.git"],
    [origins[1] as Sha1, "https://example.org/alpha.git"],
  ]);
  const revisions: Sha1[] = [];
  const directories: Sha1[] = [];
  const calls: Call[] = [["originAdd", new Map(urls)]];
  const occurrences = new Map<Sha1, ProvenanceResult[]>();
  const direct = new Map<Sha1, ProvenanceResult[]>();
  const contentDates = new Map<Sha1, bigint>();
  const base = 1_600_000_000_000_000n;

  for (let r = 0; r < revisionCount; r++) {
    const revision = sha1(`revision ${r}`);
    revisions.push(revision);
    // Revisions 2 and 3 share a date, so ties are broken by revision id; µs precision matters.
    const date = base + BigInt((r === 3 ? 2 : r) * 86_400) * 1_000_000n + 123_457n;
    const origin = origins[r % 2] as Sha1;
    const url = urls.get(origin) ?? null;
    const root = new Map<Sha1, Path[]>();
    for (let f = 0; f < 3; f++) {
      const content = pick(contents);
      root.set(content, [...(root.get(content) ?? []), utf8(`file${f}.c`)]);
    }
    const directory = sha1(`directory ${r % 3}`);
    if (!directories.includes(directory)) directories.push(directory);
    const inDirectory = new Map<Sha1, Path[]>();
    for (let f = 0; f < 2; f++) {
      const content = contents[(r % 3) * 2 + f] as Sha1;
      inDirectory.set(content, [utf8(`mod${f}.h`)]);
    }
    const dirPath = r % 3 === 0 ? utf8("lib") : r % 3 === 1 ? utf8(".") : utf8("");

    const seen = new Map<Sha1, bigint>();
    for (const [content, paths] of root)
      for (const path of paths) {
        const result = { content, revision, date, origin: url, path };
        direct.set(content, [...(direct.get(content) ?? []), result]);
        occurrences.set(content, [...(occurrences.get(content) ?? []), result]);
        seen.set(content, date);
      }
    for (const [content, paths] of inDirectory)
      for (const path of paths) {
        const full =
          dirPath.length === 0 || dirPath.toString() === "."
            ? path
            : Buffer.concat([dirPath, utf8("/"), path]);
        occurrences.set(content, [
          ...(occurrences.get(content) ?? []),
          { content, revision, date, origin: url, path: full },
        ]);
        seen.set(content, date);
      }
    for (const [content, d] of seen)
      if (!contentDates.has(content) || d < (contentDates.get(content) as bigint))
        contentDates.set(content, d);

    calls.push(["revisionAdd", new Map([[revision, { date, origin }]])]);
    calls.push(["contentAdd", seen]);
    calls.push(["directoryAdd", new Map([[directory, { date, flat: true }]])]);
    calls.push([
      "relationAdd",
      RelationType.CNT_EARLY_IN_REV,
      new Map([...root].map(([content, paths]) => [content, paths.map((path) => ({ dst: revision, path }))])),
    ]);
    calls.push([
      "relationAdd",
      RelationType.CNT_IN_DIR,
      new Map(
        [...inDirectory].map(([content, paths]) => [
          content,
          paths.map((path) => ({ dst: directory, path })),
        ]),
      ),
    ]);
    calls.push([
      "relationAdd",
      RelationType.DIR_IN_REV,
      new Map([[directory, [{ dst: revision, path: dirPath }]]]),
    ]);
    calls.push([
      "relationAdd",
      RelationType.REV_IN_ORG,
      new Map([[revision, [{ dst: origin, path: null }]]]),
    ]);
    if (r > 0)
      calls.push([
        "relationAdd",
        RelationType.REV_BEFORE_REV,
        new Map([[revisions[r - 1] as Sha1, [{ dst: revision, path: null }]]]),
      ]);
  }

  const order = (a: ProvenanceResult, b: ProvenanceResult) =>
    a.date !== b.date
      ? a.date < b.date
        ? -1
        : 1
      : a.revision !== b.revision
        ? a.revision < b.revision
          ? -1
          : 1
        : Buffer.compare(Buffer.from(a.origin ?? "\uffff"), Buffer.from(b.origin ?? "\uffff")) ||
          Buffer.compare(a.path, b.path);
  const unique = (list: ProvenanceResult[]) => {
    const map = new Map(
      list.map((o) => [`${o.revision}${o.origin}${Buffer.from(o.path).toString("hex")}`, o]),
    );
    return [...map.values()].sort(order);
  };
  const first = new Map<Sha1, ProvenanceResult | null>();
  for (const content of contents) {
    occurrences.set(content, unique(occurrences.get(content) ?? []));
    first.set(content, unique(direct.get(content) ?? [])[0] ?? null);
  }
  return { calls, contents, directories, revisions, origins, occurrences, first, contentDates };
}

/** Everything a storage holds, in a comparable shape (ids sorted, paths as hex). */
export async function dump(storage: ProvenanceStorage, only?: (id: Sha1) => boolean): Promise<unknown> {
  const keep = only ?? (() => true);
  const hexPath = (path: Path | null) => (path === null ? null : Buffer.from(path).toString("hex"));
  const entities: Record<string, Sha1[]> = {};
  for (const entity of Object.values(EntityType))
    entities[entity] = [...(await storage.entityGetAll(entity))].filter(keep).sort();
  const relations: Record<string, unknown> = {};
  for (const relation of Object.values(RelationType))
    relations[relation] = [...(await storage.relationGetAll(relation))]
      .filter(([src]) => keep(src))
      .map(([src, rows]) => [src, rows.map((row) => [row.dst, hexPath(row.path)])]);
  const sorted = <V>(map: Map<Sha1, V>) => [...map].sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    entities,
    contents: sorted(await storage.contentGet(entities.content ?? [])),
    directories: sorted(await storage.directoryGet(entities.directory ?? [])),
    revisions: sorted(await storage.revisionGet(entities.revision ?? [])),
    origins: sorted(await storage.originGet(entities.origin ?? [])),
    locations: only ? undefined : (await storage.locationGetAll()).map(hexPath),
    relations,
  };
}
