import { nodeSatisfies } from "./node-range.js";
import type { XErrorClass } from "./options.js";

/** An optional peer dependency, as the package that needs it describes it. */
export interface OptionalPeer {
  /** Its npm name, e.g. `"better-sqlite3"`. */
  name: string;
  /** The majors the package supports, as in its peer range, e.g. `[12, 13]`. */
  majors: readonly number[];
  /** What needs it, for messages: e.g. `"SqliteCache"`. */
  neededFor: string;
  /** The package that needs it, for messages: e.g. `"@x/checkpoint"`. */
  requiredBy: string;
}

/** The errors {@link requireOptionalPeer} throws, in the caller package's class and codes. */
export interface OptionalPeerErrors {
  /** The package's `XError` subclass. */
  ErrorClass: XErrorClass;
  /** The code when the peer is not installed or does not load. */
  missingCode: string;
  /** The code when the installed version is outside `majors`, or does not support the running Node. */
  versionCode: string;
}

/**
 * Loads an optional peer dependency with `require`, resolved from `from` (the caller's `import.meta.url`).
 * The installed version is checked before the module loads, because a native module built for another
 * Node can crash the process instead of throwing. Call it where the peer is first needed, never at import.
 *
 * @throws `errors.missingCode` when the peer is not installed or fails to load, naming the package to install
 * @throws `errors.versionCode` when its major is not one of `peer.majors`, or its `engines.node` excludes
 * the running Node, naming both versions
 */
export function requireOptionalPeer<T>(
  from: string | URL,
  peer: OptionalPeer,
  errors: OptionalPeerErrors,
): T {
  // Loaded here rather than imported, so that importing @x/core/internal stays cheap (see command-line.ts)
  const { readFileSync } = process.getBuiltinModule("node:fs");
  const require = process.getBuiltinModule("node:module").createRequire(from);
  const { ErrorClass } = errors;
  let manifest: { version: string; engines?: { node?: string } };
  try {
    manifest = JSON.parse(readFileSync(require.resolve(`${peer.name}/package.json`), "utf8"));
  } catch (cause) {
    throw missing(peer, errors, cause);
  }
  const { version } = manifest;
  const supported = peer.majors.map((major) => `^${major}.0.0`).join(" || ");
  if (!peer.majors.includes(Number.parseInt(version, 10)))
    throw new ErrorClass(
      errors.versionCode,
      `${peer.neededFor} supports ${peer.name} ${supported}, but ${version} is installed: ` +
        `install a supported version (npm install ${peer.name}@${peer.majors.at(-1)})`,
    );
  const range = manifest.engines?.node;
  if (range && !nodeSatisfies(range, process.versions.node))
    throw new ErrorClass(
      errors.versionCode,
      `${peer.name} ${version} needs Node ${range}, and this is Node ${process.versions.node}: ` +
        `run a Node it supports, or install a ${peer.name} that supports this Node`,
    );
  try {
    return require(peer.name) as T;
  } catch (cause) {
    throw missing(peer, errors, cause);
  }
}

function missing(peer: OptionalPeer, errors: OptionalPeerErrors, cause: unknown) {
  const detail = cause instanceof Error ? cause.message.split("\n")[0] : String(cause);
  return new errors.ErrorClass(
    errors.missingCode,
    `${peer.neededFor} needs the optional peer dependency ${peer.name}, which could not be loaded: ` +
      `install it (npm install ${peer.name}) next to ${peer.requiredBy} (${detail})`,
    { cause },
  );
}
