import { bytesKey, pathId } from "./bytes.js";
import { badInput } from "./errors.js";
import {
  checkDirectoryData,
  checkIterable,
  checkMap,
  checkPath,
  checkRelation,
  checkRelationData,
  checkRevisionData,
  checkSha1,
  checkTimestamp,
  checkUrl,
} from "./input.js";
import { ranges } from "./ranges.js";
import type { Path, RelationType, Sha1, WriteMethod } from "./types.js";

/** The write methods, by wire name. */
export const writeMethods: readonly WriteMethod[] = [
  "content_add",
  "directory_add",
  "location_add",
  "origin_add",
  "revision_add",
  "relation_add",
];

/** The five exchanges, and the (method, relation) pairs each one routes. */
export const exchangeBindings: Readonly<
  Record<string, ReadonlyArray<readonly [WriteMethod, RelationType | null]>>
> = {
  content: [
    ["content_add", null],
    ["relation_add", "content_in_revision"],
    ["relation_add", "content_in_directory"],
  ],
  directory: [
    ["directory_add", null],
    ["relation_add", "directory_in_revision"],
  ],
  revision: [
    ["revision_add", null],
    ["relation_add", "revision_before_revision"],
    ["relation_add", "revision_in_origin"],
  ],
  origin: [["origin_add", null]],
  location: [["location_add", null]],
};

export { ranges };

/** One worker queue: its name (= its binding key), exchange, method, relation and range. */
export interface QueueSpec {
  name: string;
  exchange: string;
  method: WriteMethod;
  relation: RelationType | null;
  range: string;
}

/** The 160 worker queues, range by range. */
export const workerQueues: readonly QueueSpec[] = ranges.flatMap((range) =>
  Object.entries(exchangeBindings).flatMap(([exchange, bindings]) =>
    bindings.map(([method, relation]) => ({
      name: `${method}.${relation ?? "unknown"}.${range}`,
      exchange,
      method,
      relation,
      range,
    })),
  ),
);

/** The exchange a write goes to: the first word of the method, or of the relation for `relation_add`. */
export function exchangeOf(method: WriteMethod, relation: RelationType | null): string {
  return ((method === "relation_add" ? relation : method) ?? "").split("_")[0] as string;
}

function checkMethod(caller: string, meth: unknown, relation: unknown): [WriteMethod, RelationType | null] {
  if (!writeMethods.includes(meth as WriteMethod)) throw badInput(caller, "unknown method", meth);
  if (meth === "relation_add") {
    if (relation === undefined || relation === null)
      throw badInput(caller, "'relation_add' requires 'relation' to be provided");
    return [meth, checkRelation(caller, relation)];
  }
  if (relation !== undefined && relation !== null)
    throw badInput(caller, `'${meth as string}' requires 'relation' to be undefined`);
  return [meth as WriteMethod, null];
}

/**
 * The routing key of a write item: `<meth>.<relation | "unknown">.<first hex digit of the id>`. For
 * `location_add` pass the SHA-1 of the path (see {@link splitRanges}).
 *
 * @param meth - a write method's wire name, e.g. `"content_add"`
 * @param id - the item's id (40 lowercase hex characters)
 * @param relation - required for `relation_add`, forbidden otherwise
 * @throws `ERR_X_RMQ_STORAGE_BAD_INPUT` for an unknown method or relation, a missing or extra relation, a bad id
 */
export function routingKey(meth: string, id: Sha1, relation?: RelationType): string {
  const [method, rel] = checkMethod("routingKey", meth, relation);
  return `${method}.${rel ?? "unknown"}.${checkSha1("routingKey", id)[0]}`;
}

/** One item of {@link splitRanges}: `[id, value]`, `[id]`, `[path]` or `[src, dst, path]`. */
export type Item = readonly unknown[];

/**
 * Validates a write's data and splits it by routing key: keys in the order of their first item, items
 * distinct and in first-seen order (`[id, value]` for a `Map`, `[id]` for bare ids, `[path]` for
 * `location_add`, routed by the path's SHA-1, `[src, dst, path]` for `relation_add`, routed by the source).
 *
 * @param data - what the write method was given
 * @param meth - the write method's wire name
 * @param relation - required for `relation_add`, forbidden otherwise
 * @throws `ERR_X_RMQ_STORAGE_BAD_INPUT` on any invalid item; nothing is returned then
 */
export function splitRanges(data: unknown, meth: string, relation?: RelationType): Map<string, Item[]> {
  return splitItems("splitRanges", data, meth, relation);
}

/** {@link splitRanges}, with errors naming `caller` (the client's write method). */
export function splitItems(
  caller: string,
  data: unknown,
  meth: string,
  relation?: RelationType | null,
): Map<string, Item[]> {
  const [method, rel] = checkMethod(caller, meth, relation);
  const prefix = `${method}.${rel ?? "unknown"}.`;
  const out = new Map<string, Item[]>();
  const seen = new Set<string>();
  const add = (id: Sha1, key: string, item: Item) => {
    if (seen.has(key)) return;
    seen.add(key);
    const routing = prefix + id[0];
    const list = out.get(routing);
    if (list === undefined) out.set(routing, [item]);
    else list.push(item);
  };
  if (method === "relation_add") {
    const relationValue = rel as RelationType;
    for (const [src, values] of checkMap(caller, data)) {
      checkSha1(caller, src);
      for (const value of checkIterable(caller, values)) {
        const { dst, path } = checkRelationData(caller, relationValue, value);
        add(src as Sha1, `${src}${dst}${bytesKey(path)}`, [src, dst, path]);
      }
    }
  } else if (method === "location_add") {
    for (const path of checkIterable(caller, data)) {
      const checked: Path = checkPath(caller, path);
      add(pathId(checked), bytesKey(checked), [checked]);
    }
  } else if (data instanceof Map) {
    for (const [routing, ids] of splitKeys(caller, data, method))
      out.set(
        routing,
        ids.map((id) => [id, data.get(id)]),
      );
  } else {
    for (const id of checkIterable(caller, data)) add(checkSha1(caller, id), id as string, [id]);
  }
  return out;
}

/**
 * For a `Map` write (content, directory, origin, revision): validates every entry and counts the keys by
 * their first character's code (the range of their routing key), in first-seen order, holding nothing per
 * item (the client then forms the messages as it publishes them).
 */
export function countKeys(
  caller: string,
  data: Map<unknown, unknown>,
  method: WriteMethod,
): Map<number, number> {
  const check = valueCheck(method);
  // By the id's first character (a validated hex digit), without a string or an entry per item.
  const counts = new Map<number, number>();
  data.forEach((value, id) => {
    checkSha1(caller, id);
    check(caller, value);
    const first = (id as string).charCodeAt(0);
    counts.set(first, (counts.get(first) ?? 0) + 1);
  });
  return counts;
}

/**
 * For a `Map` write (content, directory, origin, revision): validates every entry and groups the keys by
 * routing key, in first-seen order, without making an array per item (the client holds big calls this way).
 */
export function splitKeys(
  caller: string,
  data: Map<unknown, unknown>,
  method: WriteMethod,
): Map<string, Sha1[]> {
  const prefix = `${method}.unknown.`;
  const check = valueCheck(method);
  const out = new Map<string, Sha1[]>();
  for (const [id, value] of data) {
    checkSha1(caller, id);
    check(caller, value);
    const routing = prefix + (id as string)[0];
    const list = out.get(routing);
    if (list === undefined) out.set(routing, [id as Sha1]);
    else list.push(id as Sha1);
  }
  return out;
}

function valueCheck(method: WriteMethod): (caller: string, value: unknown) => unknown {
  switch (method) {
    case "content_add":
      return checkTimestamp;
    case "directory_add":
      return checkDirectoryData;
    case "origin_add":
      return checkUrl;
    default:
      return checkRevisionData;
  }
}
