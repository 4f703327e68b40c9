/** Options of {@link createStatusLine}. */
export interface StatusLineOptions {
  /** Where the line is drawn. Default `process.stderr`, so it never mixes with results on stdout. */
  stream?: NodeJS.WriteStream;
  /** Minimum time between redraws, in ms. Default 100. */
  intervalMs?: number;
}

/** A one-line progress display; see {@link createStatusLine}. */
export interface StatusLine {
  /** Whether anything is drawn at all (the stream is a terminal). */
  readonly enabled: boolean;
  /** Replaces the line's text; redraws at most once per `intervalMs`. */
  update(text: string): void;
  /** Draws `text` (or the last text) one final time and moves to a new line. Idempotent. */
  done(text?: string): void;
}

/**
 * A single self-overwriting status line for long work in a terminal. When the stream is not a TTY it does
 * nothing, so piped and logged output stays clean.
 *
 * @param options - stream and redraw interval
 */
export function createStatusLine(options: StatusLineOptions = {}): StatusLine {
  const { stream = process.stderr, intervalMs = 100 } = options;
  const enabled = stream.isTTY === true;
  let last = "";
  let drawnAt = 0;
  let finished = false;

  const draw = (text: string) => {
    const width = Math.max(10, (stream.columns ?? 80) - 1);
    stream.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    drawnAt = Date.now();
  };

  return {
    enabled,
    update(text) {
      last = text;
      if (!enabled || finished) return;
      if (Date.now() - drawnAt >= intervalMs) draw(text);
    },
    done(text) {
      if (finished) return;
      finished = true;
      if (!enabled) return;
      draw(text ?? last);
      stream.write("\n");
    },
  };
}
