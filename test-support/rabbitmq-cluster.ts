import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.js";

/** One node of a {@link RabbitCluster}. */
export interface RabbitNode {
  /** The Erlang node name, `<short>@localhost`. */
  readonly nodename: string;
  /** Its AMQP port on 127.0.0.1. */
  readonly port: number;
  /** `amqp://guest:guest@127.0.0.1:<port>`. */
  readonly url: string;
  /**
   * While it runs, the id of its process group: `rabbitmq-server` (a script that waits for the Erlang VM)
   * and the VM; `undefined` once it has exited.
   */
  readonly pid: number | undefined;
}

/** A RabbitMQ cluster of the test's own, on 127.0.0.1, apart from the machine's broker. */
export interface RabbitCluster {
  readonly nodes: readonly RabbitNode[];
  /** The nodes' AMQP URLs, in order. */
  readonly urls: string[];
  /** Sends `signal` (default SIGKILL) to a node's processes (the VM and its script) and waits until they have exited. */
  kill(node: RabbitNode, signal?: NodeJS.Signals): Promise<void>;
  /** Stops a node cleanly (`rabbitmqctl stop`) and waits until its VM has exited. */
  stop(node: RabbitNode): Promise<void>;
  /** Starts a stopped or killed node again (it rejoins the cluster) and waits until it serves. */
  start(node: RabbitNode): Promise<void>;
  /** Runs `rabbitmqctl -n <node> <args…>` against a running node; resolves to its standard output. */
  ctl(node: RabbitNode, ...args: string[]): Promise<string>;
  /** The node that leads each quorum queue whose name starts with `prefix`, as `rabbitmqctl list_queues` says. */
  leaders(prefix: string): Promise<Map<string, RabbitNode | undefined>>;
  /** Kills every node and removes their directories; idempotent. */
  close(): Promise<void>;
}

/** Options of {@link startRabbitCluster}. */
export interface RabbitClusterOptions {
  /** A short tag in the node names (`<tag><n>-<random>@localhost`). Default `xc`. */
  tag?: string;
  /** Number of nodes. Default 3. */
  size?: number;
  /** How long one node may take to boot, in ms (generous: three boot at once on two cores). Default 180 000. */
  bootTimeoutMs?: number;
}

/** Where the RabbitMQ scripts are: `RABBITMQ_SCRIPTS` or the Debian/Ubuntu package's directory. */
const SCRIPTS = process.env.RABBITMQ_SCRIPTS ?? "/usr/lib/rabbitmq/bin";

/** Whether this machine can start RabbitMQ nodes of its own (the scripts are installed). */
export function rabbitmqInstalled(): boolean {
  return existsSync(join(SCRIPTS, "rabbitmq-server")) && existsSync(join(SCRIPTS, "rabbitmqctl"));
}

/** A free TCP port on 127.0.0.1 (the kernel's choice; free at the time of the call). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Every cluster still running in this process, killed if the process exits before `close()`. */
const running = new Set<() => void>();
process.once("exit", () => {
  for (const kill of running) kill();
});

/**
 * Starts a RabbitMQ cluster on this machine, as RabbitMQ documents for several nodes on a single host: each
 * node with its own node name, AMQP and distribution ports, data and log directories, configuration file and
 * enabled-plugins file (none: no management listener), all sharing a fresh Erlang cookie; the nodes boot
 * in parallel, then every node but the first runs `rabbitmqctl stop_app`, `join_cluster <first>` and
 * `start_app`. The machine's own broker (its node name, ports, cookie and files) is never touched. Call
 * `close()` when done (an `afterAll`); a process that exits first kills the nodes anyway.
 *
 * @throws when a node does not boot or join within its time; the nodes started so far are killed first
 */
export async function startRabbitCluster(options: RabbitClusterOptions = {}): Promise<RabbitCluster> {
  const { tag = "xc", size = 3, bootTimeoutMs = 180_000 } = options;
  const base = mkdtempSync(join(tmpdir(), `rabbit-${tag}-`));
  const unique = randomBytes(3).toString("hex");
  writeFileSync(join(base, ".erlang.cookie"), randomBytes(20).toString("hex").toUpperCase(), { mode: 0o400 });
  writeFileSync(join(base, "enabled_plugins"), "[].\n");
  // The command-line tools' own distribution ports: a range of this cluster's, so that they never compete
  // with other users of rabbitmqctl on the machine for the default 35672–35682.
  const ctlPort = await freePort();
  interface Node extends RabbitNode {
    pid: number | undefined;
    child: ChildProcess | undefined;
    env: NodeJS.ProcessEnv;
  }
  const nodes: Node[] = [];
  for (let n = 1; n <= size; n++) {
    const port = await freePort();
    const distPort = await freePort();
    const short = `${tag}${n}-${unique}`;
    const dir = join(base, short);
    mkdirSync(dir);
    writeFileSync(
      join(dir, "rabbitmq.conf"),
      [
        `listeners.tcp.1 = 127.0.0.1:${port}`,
        "log.console = false",
        "log.file.level = info",
        // Let a node of a minority keep serving nothing rather than pause: the tests kill nodes on purpose.
        "cluster_partition_handling = ignore",
        "",
      ].join("\n"),
    );
    writeFileSync(join(dir, "rabbitmq-env.conf"), "");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: base,
      RABBITMQ_NODENAME: `${short}@localhost`,
      RABBITMQ_NODE_IP_ADDRESS: "127.0.0.1",
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(distPort),
      RABBITMQ_CONF_ENV_FILE: join(dir, "rabbitmq-env.conf"),
      RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq.conf"),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(base, "enabled_plugins"),
      RABBITMQ_MNESIA_BASE: join(dir, "mnesia"),
      RABBITMQ_LOG_BASE: join(dir, "log"),
      RABBITMQ_PID_FILE: join(dir, "pid"),
      RABBITMQ_CTL_DIST_PORT_MIN: String(ctlPort),
      RABBITMQ_CTL_DIST_PORT_MAX: String(ctlPort),
      ERL_EPMD_ADDRESS: "127.0.0.1",
      ERL_FLAGS: "-kernel inet_dist_use_interface {127,0,0,1}",
    };
    nodes.push({
      nodename: `${short}@localhost`,
      port,
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      pid: undefined,
      child: undefined,
      env,
    });
  }

  /** Signals a node's whole process group: the script alone would leave the VM running. */
  const signal = (node: Node, name: NodeJS.Signals) => {
    if (node.pid !== undefined)
      try {
        process.kill(-node.pid, name);
      } catch {}
  };
  const killAll = () => {
    for (const node of nodes) signal(node, "SIGKILL");
  };
  running.add(killAll);

  /** rabbitmqctl can run only one at a time with the cluster's single command-line distribution port. */
  let ctlQueue: Promise<unknown> = Promise.resolve();
  const ctl = (node: RabbitNode, ...args: string[]): Promise<string> => {
    const { env, nodename } = node as Node;
    const run = () =>
      new Promise<string>((resolve, reject) =>
        execFile(
          join(SCRIPTS, "rabbitmqctl"),
          ["-n", nodename, ...args],
          { env, timeout: bootTimeoutMs },
          (error, stdout, stderr) =>
            error
              ? reject(new Error(`rabbitmqctl -n ${nodename} ${args.join(" ")}: ${stderr || stdout}`))
              : resolve(stdout),
        ),
      );
    const result = ctlQueue.then(run, run);
    ctlQueue = result.catch(() => {});
    return result;
  };

  const exited = (node: Node) =>
    new Promise<void>((resolve) => {
      const child = node.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
    });

  const boot = async (node: Node) => {
    // `ulimit -n`: every quorum queue holds file handles; 1 024 is soon exhausted (the whole node then hangs).
    const child = spawn(
      "sh",
      ["-c", `ulimit -n $(ulimit -Hn) 2>/dev/null; exec "${join(SCRIPTS, "rabbitmq-server")}"`],
      // In the cluster's directory: a node writes crash dumps (MnesiaCore.*) to its working directory.
      { env: node.env, stdio: "ignore", detached: true, cwd: base },
    );
    node.child = child;
    node.pid = child.pid;
    child.once("exit", () => {
      if (node.child === child) node.pid = undefined;
    });
    await waitFor(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`RabbitMQ node ${node.nodename} exited (${child.exitCode})`);
        return ctl(node, "await_startup", "--timeout", "5").then(
          () => true,
          () => false,
        );
      },
      bootTimeoutMs,
      `RabbitMQ node ${node.nodename} to boot`,
    );
  };

  const cluster: RabbitCluster = {
    nodes,
    urls: nodes.map((node) => node.url),
    ctl,
    kill: async (node, name = "SIGKILL") => {
      signal(node as Node, name);
      await exited(node as Node);
    },
    stop: async (node) => {
      await ctl(node, "stop");
      await exited(node as Node);
    },
    start: (node) => boot(node as Node),
    leaders: async (prefix) => {
      const out = await ctl(
        nodes.find((node) => node.pid !== undefined) as RabbitNode,
        "list_queues",
        "-q",
        "--no-table-headers",
        "name",
        "leader",
      );
      const leaders = new Map<string, RabbitNode | undefined>();
      for (const line of out.split("\n")) {
        const [name, leader] = line.trim().split(/\s+/);
        if (name?.startsWith(prefix))
          leaders.set(
            name,
            nodes.find((node) => node.nodename === leader),
          );
      }
      return leaders;
    },
    close: async () => {
      killAll();
      await Promise.all(nodes.map(exited));
      running.delete(killAll);
      rmSync(base, { recursive: true, force: true });
    },
  };

  try {
    await Promise.all(nodes.map(boot));
    const [first, ...others] = nodes as [Node, ...Node[]];
    for (const node of others) {
      await ctl(node, "stop_app");
      await ctl(node, "join_cluster", first.nodename);
      await ctl(node, "start_app");
    }
    const members = await ctl(first, "cluster_status", "--formatter", "json");
    const running = (JSON.parse(members) as { running_nodes: string[] }).running_nodes;
    if (running.length !== size) throw new Error(`the cluster formed with ${running.join(", ")} only`);
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}
