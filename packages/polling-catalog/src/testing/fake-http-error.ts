/** A request the fake answers with an error status and a `text/plain` body. */
export class FakeHttpError extends Error {
  /** The HTTP status to answer with. */
  readonly status: number;

  /**
   * @param status - the HTTP status
   * @param message - the text body
   */
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** 400 Bad Request. */
export const badRequest = (message: string) => new FakeHttpError(400, message);
/** 409 Conflict. */
export const conflict = (message: string) => new FakeHttpError(409, message);
/** 501 Not Implemented, naming the feature. */
export const notImplemented = (feature: string) =>
  new FakeHttpError(501, `The fake ERMrest does not implement ${feature}.`);
