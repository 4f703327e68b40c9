/** Package version, for diagnostics. */
export const version = "0.1.0";
