/** Where a fake ERMrest publishes its change notices: nowhere, or a broker and an exchange. */
export interface FakeNoticeSource {
  /** The broker the fake publishes on (with its password), or `undefined` when it publishes none. */
  readonly amqpUrl: string | undefined;
  /** The fanout exchange it publishes on. */
  readonly noticeExchange: string;
}

/**
 * The fakes running in this process, by `server` (`127.0.0.1:<port>`). Kept on `globalThis` under a
 * `Symbol.for` key so that the main entry and `@x/polling-catalog/testing` agree even when two copies of the
 * package are installed.
 */
const key = Symbol.for("@x/polling-catalog/fake-ermrest-servers");

function running(): Map<string, FakeNoticeSource> {
  const global = globalThis as { [key]?: Map<string, FakeNoticeSource> };
  global[key] ??= new Map();
  return global[key];
}

/**
 * Records that a fake ERMrest serves at `server` and where its notices go, until the returned function is
 * called (at the fake's `close()`).
 *
 * @param server - the fake's `server`, `127.0.0.1:<port>`
 * @param source - its notice broker and exchange
 */
export function registerFakeServer(server: string, source: FakeNoticeSource): () => void {
  running().set(server, source);
  return () => {
    if (running().get(server) === source) running().delete(server);
  };
}

/**
 * Where the fake ERMrest at `server` publishes its notices, if a fake of this process serves there.
 *
 * @param server - a catalog's `server` option
 */
export function fakeNoticeSource(server: string): FakeNoticeSource | undefined {
  return running().get(server);
}
