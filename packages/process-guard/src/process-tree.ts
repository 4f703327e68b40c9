import {
  hasProcfs,
  isCode,
  ProcessGone,
  pageSize,
  ps,
  readProcFd,
  readProcStat,
  residentPages,
} from "./process-info.js";

const { closeSync, existsSync, fstatSync, openSync, readdirSync } = process.getBuiltinModule("node:fs");

/** Above this many processes, a sampler stops keeping their files open (three per process) between samples. */
const MAX_KEPT_PROCESSES = 256;

/** The open files of one process of the tree. */
interface ProcFiles {
  /** `/proc/<pid>/statm`: its RSS. */
  statm: number;
  /** `/proc/<pid>/task`: its link count is the number of threads plus 2. */
  task: number;
  /** Per thread id: its `children` file. */
  children: Map<string, number>;
  /** The sample that last found it in the tree. */
  seen: number;
}

/** Whether `error` says that the process or thread is gone. */
const gone = (error: unknown) => isCode(error, "ENOENT") || isCode(error, "ESRCH");

/**
 * Samples the process tree of `root` (Linux): follows `/proc/<pid>/task/<tid>/children` down from it, so it reads
 * the files of the tree's own processes only (`statm`, and one `children` file per thread), whatever else runs
 * on the machine. The files stay open between samples: a descriptor of `/proc/<pid>/…` keeps naming that
 * process (it reads ESRCH once it is gone, even when the pid is reused), and reading it again costs a fraction
 * of opening it. `close()` closes them.
 */
export class ProcTreeSampler {
  readonly #files = new Map<number, ProcFiles>();
  #sample = 0;

  constructor(readonly root: number) {}

  /** The processes of the tree now, with their RSS in bytes; throws `ProcessGone` when `root` is gone. */
  sample(): ProcessTree {
    const sample = ++this.#sample;
    const page = pageSize();
    const tree: ProcessTree = new Map();
    const stack = [this.root];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      if (tree.has(pid)) continue;
      const files = this.#open(pid);
      let pages: number | undefined;
      try {
        pages = files === undefined ? undefined : residentPages(readProcFd(files.statm));
      } catch (error) {
        if (!gone(error)) throw error;
      }
      if (files === undefined || pages === undefined) {
        this.#drop(pid);
        if (pid === this.root) throw new ProcessGone(pid);
        continue; // a descendant that ended meanwhile
      }
      files.seen = sample;
      tree.set(pid, pages * page);
      this.#children(pid, files, stack);
    }
    for (const [pid, files] of this.#files) if (files.seen !== sample) this.#drop(pid);
    if (this.#files.size > MAX_KEPT_PROCESSES) this.close();
    return tree;
  }

  /** Pushes the children of every thread of `pid`: a child belongs to the thread that started it. */
  #children(pid: number, files: ProcFiles, stack: number[]): void {
    let tids: string[];
    // most processes have one thread, whose id is the pid: no need to list them
    if (fstatSync(files.task).nlink === 3) tids = [String(pid)];
    else {
      try {
        tids = readdirSync(`/proc/${pid}/task`);
      } catch {
        return; // it ended meanwhile
      }
    }
    for (const [tid, fd] of files.children) {
      if (!tids.includes(tid)) {
        closeSync(fd);
        files.children.delete(tid);
      }
    }
    for (const tid of tids) {
      let fd = files.children.get(tid);
      let text: string;
      try {
        if (fd === undefined) {
          fd = openSync(`/proc/${pid}/task/${tid}/children`, "r");
          files.children.set(tid, fd);
        }
        text = readProcFd(fd);
      } catch (error) {
        if (!gone(error)) throw error;
        continue; // the thread ended meanwhile
      }
      for (const field of text.split(" ")) {
        const child = Number(field); // the list ends with a space: "" is 0
        if (child > 0) stack.push(child);
      }
    }
  }

  #open(pid: number): ProcFiles | undefined {
    let files = this.#files.get(pid);
    if (files !== undefined) return files;
    let statm: number | undefined;
    try {
      statm = openSync(`/proc/${pid}/statm`, "r");
      files = { statm, task: openSync(`/proc/${pid}/task`, "r"), children: new Map(), seen: 0 };
    } catch (error) {
      if (statm !== undefined) closeSync(statm);
      if (gone(error)) return undefined;
      throw error;
    }
    this.#files.set(pid, files);
    return files;
  }

  #drop(pid: number): void {
    const files = this.#files.get(pid);
    if (files === undefined) return;
    this.#files.delete(pid);
    closeSync(files.statm);
    closeSync(files.task);
    for (const fd of files.children.values()) closeSync(fd);
  }

  /** Closes every file it keeps open; it may sample again afterwards (and opens them again). Idempotent. */
  close(): void {
    for (const pid of [...this.#files.keys()]) this.#drop(pid);
  }
}

/** One sample of the tree of `root`, by {@link ProcTreeSampler}, its files closed afterwards. */
export function followProcTree(root: number): ProcessTree {
  const sampler = new ProcTreeSampler(root);
  try {
    return sampler.sample();
  } finally {
    sampler.close();
  }
}

/** The processes of a tree: pid → RSS in bytes. */
export type ProcessTree = Map<number, number>;

/** `root` and all its descendants (by ppid), with their RSS, from one snapshot of every process. */
function treeFromRows(root: number, rows: Iterable<[pid: number, ppid: number, rss: number]>): ProcessTree {
  const children = new Map<number, number[]>();
  const rssByPid = new Map<number, number>();
  for (const [pid, ppid, rss] of rows) {
    rssByPid.set(pid, rss);
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  if (!rssByPid.has(root)) throw new ProcessGone(root);
  const tree: ProcessTree = new Map();
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (tree.has(pid)) continue;
    tree.set(pid, rssByPid.get(pid) ?? 0);
    for (const child of children.get(pid) ?? []) stack.push(child);
  }
  return tree;
}

/**
 * The tree of `root` from `/proc/<pid>/stat` of every process on the machine: the way when the kernel has no
 * `children` files (see `ProcTreeSampler`). About 50 µs per process of the machine.
 */
export function scanProcTree(root: number): ProcessTree {
  const page = pageSize();
  const rows: [number, number, number][] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readProcStat(pid);
      rows.push([pid, stat.ppid, stat.rss * page]);
    } catch {
      // the process ended between readdir and read
    }
  }
  return treeFromRows(root, rows);
}

let childrenFiles: boolean | undefined;

/** Whether this kernel has `/proc/<pid>/task/<tid>/children` (`CONFIG_PROC_CHILDREN`, on in common kernels). */
export function hasChildrenFiles(): boolean {
  childrenFiles ??= existsSync(`/proc/self/task/${process.pid}/children`);
  return childrenFiles;
}

/** The RSS of a whole tree, in bytes. */
export function sumTree(tree: ProcessTree): number {
  let total = 0;
  for (const rss of tree.values()) total += rss;
  return total;
}

/**
 * The RSS of `root` plus every descendant's, in bytes, enumerated afresh: on Linux by following the tree's own
 * `children` files down from `root` (or by reading every process in `/proc` on a kernel without them), one
 * `ps -A -o pid=,ppid=,rss=` elsewhere. Shared pages are counted once per process.
 */
export function treeRssOf(root: number, procfs = hasProcfs): number | Promise<number> {
  if (procfs) return sumTree(hasChildrenFiles() ? followProcTree(root) : scanProcTree(root));
  return ps(["-A", "-o", "pid=,ppid=,rss="]).then((out) => {
    const rows: [number, number, number][] = [];
    for (const line of out.split("\n")) {
      const [pid, ppid, rss] = line.trim().split(/\s+/).map(Number);
      if (pid !== undefined && ppid !== undefined && rss !== undefined && Number.isInteger(pid)) {
        rows.push([pid, ppid, rss * 1024]);
      }
    }
    return sumTree(treeFromRows(root, rows));
  });
}
