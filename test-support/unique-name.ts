/**
 * A name no other test or run uses, for exchanges, queues, schemas and prefixes:
 * `t_<tag>_<pid>_<time>_<random>`, made of lowercase letters, digits and underscores around `tag`
 * (so a valid unquoted SQL identifier when `tag` is one).
 */
export function uniqueName(tag: string): string {
  return `t_${tag}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
}
