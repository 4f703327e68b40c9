/**
 * The C library's words for a failed system call, as GNU tools print them (`No such file or directory`, `No
 * space left on device`), from a Node error's `errno`; its message when it has none.
 */
export function errnoText(error: NodeJS.ErrnoException | undefined): string {
  const words =
    error?.errno === undefined
      ? undefined
      : process.getBuiltinModule("node:util").getSystemErrorMap().get(error.errno)?.[1];
  const text = words ?? String(error?.message ?? error);
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
