/**
 * `@x/rmq-storage/routing`: the pure functions behind the write path, for tools that route, split or
 * merge provenance data themselves (as in swh-provenance): which queue an id goes to, how a call is cut
 * per range, and how two values of one id merge.
 */
export { resolveDates, resolveDirectory, resolveRelation, resolveRevision } from "./resolve.js";
export { type Item, routingKey, splitRanges } from "./routing.js";
