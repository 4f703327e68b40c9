/** A request the fake answers with an error status and a `text/plain` body. */
export class FakeHttpError extends Error {
  override name = "FakeHttpError";
  /** The HTTP status to answer with. */
  readonly status: number;
  /** Extra response headers, e.g. the `ETag` of a 412. */
  readonly headers: Record<string, string>;

  /**
   * @param status - the HTTP status
   * @param message - the text body
   * @param headers - extra response headers
   */
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/** 400 Bad Request. */
export const badRequest = (message: string) => new FakeHttpError(400, message);
/** 409 Conflict. */
export const conflict = (message: string) => new FakeHttpError(409, message);
/** 501 Not Implemented, naming the feature. */
export const notImplemented = (feature: string) =>
  new FakeHttpError(501, `The fake ERMrest does not implement ${feature}.`);
