/**
 * The schema builders of `v`, named as in zod for the subset the toolkit uses.
 *
 * @module
 */
export { type ArraySchema, array, type TupleSchema, tuple } from "./array.js";
export { type Issue, type Message, type ParseResult, SchemaError } from "./issue.js";
export { type NumberSchema, number } from "./number.js";
export { type ObjectSchema, object, strictObject } from "./object.js";
export type { PredicateSchema } from "./predicate.js";
export { type RecordSchema, record } from "./record.js";
export type { RuledSchema } from "./ruled.js";
export { type Output, preprocess, type Schema } from "./schema.js";
export { type StringSchema, string } from "./string.js";
export { type UnionSchema, union } from "./union.js";
export {
  boolean,
  custom,
  date,
  enumOf as enum,
  instanceOf as instanceof,
  literal,
  undefinedValue as undefined,
  unknown,
} from "./values.js";
