/**
 * ERMrest's write serialization, per table. Every ERMrest write also updates its table's row of
 * `table_last_modified` inside a SERIALIZABLE transaction, so two writes to one table whose transactions
 * overlap in time conflict whichever rows they touch: the first to commit wins and PostgreSQL aborts the other
 * (ERMrest answers `503 Transaction aborted.`). Writes to different tables never conflict.
 */
export class TableCommits {
  readonly #counts = new Map<string, number>();

  /** Opens a transaction on `table`: a token for {@link TableCommits.conflicts}. */
  begin(table: string): number {
    return this.#counts.get(table) ?? 0;
  }

  /** Whether another write committed on `table` since the transaction of `token` began. */
  conflicts(table: string, token: number): boolean {
    return (this.#counts.get(table) ?? 0) !== token;
  }

  /** Records a committed write on `table`. */
  commit(table: string): void {
    this.#counts.set(table, (this.#counts.get(table) ?? 0) + 1);
  }
}
