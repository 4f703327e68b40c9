/**
 * The database schema, declaration for declaration the original supervisor's, so existing `state.db` files
 * open unchanged. `migrations[k - 1]` takes a database from `user_version` k - 1 to k. Never edit a step:
 * add a new one.
 */
export const migrations: readonly string[] = [
  // Version 1: fetcher names, fetcher runs, the queue, the dispatch log, and the triggers that keep
  // queue.last_started equal to log.started for the same attr path.
  `
  CREATE TABLE fetchers (
    fetcher_id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE
  ) STRICT;

  CREATE TABLE fetcher_runs (
    fetcher_id INTEGER NOT NULL REFERENCES fetchers (fetcher_id),
    run_started INTEGER NOT NULL,
    is_complete INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (fetcher_id, run_started)
  ) STRICT;
  CREATE INDEX fetcher_run_started_index ON fetcher_runs (run_started, fetcher_id);

  CREATE TRIGGER fetcher_runs_delete AFTER DELETE ON fetcher_runs BEGIN
    DELETE FROM fetchers
    WHERE fetcher_id = OLD.fetcher_id
      AND NOT EXISTS (SELECT 1 FROM fetcher_runs WHERE fetcher_id = OLD.fetcher_id);
  END;

  CREATE TABLE queue (
    fetcher_id INTEGER NOT NULL,
    fetcher_run_started INTEGER NOT NULL,
    attr_path TEXT NOT NULL,
    payload TEXT NOT NULL,
    is_dequeued INTEGER NOT NULL DEFAULT 0,
    last_started INTEGER,
    PRIMARY KEY (fetcher_run_started, fetcher_id, attr_path),
    FOREIGN KEY (fetcher_id, fetcher_run_started)
      REFERENCES fetcher_runs (fetcher_id, run_started) ON DELETE CASCADE
  ) STRICT;
  CREATE INDEX queue_order_index ON queue (last_started ASC, attr_path, fetcher_id, fetcher_run_started DESC);
  CREATE INDEX queue_attr_path_index ON queue (attr_path ASC);

  CREATE TABLE log (
    attr_path TEXT PRIMARY KEY,
    started INTEGER NOT NULL,
    finished INTEGER,
    exit_code INTEGER
  ) STRICT, WITHOUT ROWID;

  CREATE TRIGGER queue_insert_started AFTER INSERT ON queue BEGIN
    UPDATE queue SET last_started = (SELECT started FROM log WHERE log.attr_path = NEW.attr_path)
    WHERE queue.rowid = NEW.rowid AND EXISTS (SELECT 1 FROM log WHERE log.attr_path = NEW.attr_path);
  END;
  CREATE TRIGGER log_insert_started AFTER INSERT ON log BEGIN
    UPDATE queue SET last_started = NEW.started WHERE queue.attr_path = NEW.attr_path;
  END;
  CREATE TRIGGER log_update_started AFTER UPDATE OF started ON log BEGIN
    UPDATE queue SET last_started = NEW.started WHERE queue.attr_path = NEW.attr_path;
  END;
  `,
  // Version 2: the jitter column and the index that orders by it. The old rows had no jitter, so every run
  // and every log row goes (the cascade and the trigger empty queue and fetchers; ids keep counting up).
  `
  DELETE FROM fetcher_runs;
  DELETE FROM log;
  ALTER TABLE queue ADD COLUMN order_jitter INTEGER;
  DROP INDEX queue_order_index;
  CREATE INDEX queue_order_index
    ON queue (last_started ASC, order_jitter, attr_path, fetcher_id, fetcher_run_started DESC);
  `,
];

/** The newest schema version this package writes and reads. */
export const latestSchemaVersion = migrations.length;
