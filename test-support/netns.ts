import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A network namespace of the test's own, joined to the host by a veth pair (`10.231.<n>.1` on the host's end,
 * `.2` inside): a process started inside reaches the host, and so the services, only over that link, which the
 * test takes down and up with the kernel's own `ip link`, as a cable pulled out and put back.
 */
export interface NetworkNamespace {
  /** The namespace's name (`ip netns list`). */
  readonly name: string;
  /** The host's address on the link: where a process inside connects to reach the host. */
  readonly hostAddress: string;
  /** The command that runs a program inside: `[...exec, program, ...args]`. */
  readonly exec: readonly string[];
  /** Takes the link down (`false`: the host's end goes down, the inside loses its carrier) or up again. */
  link(up: boolean): Promise<void>;
  /** Deletes the namespace; its end of the veth pair, and so the pair, goes with it. Idempotent. */
  close(): Promise<void>;
}

/** Whether this machine lets the tests make network namespaces (root, or CAP_NET_ADMIN, and `ip`). */
export function networkNamespacesAllowed(): boolean {
  const probe = `xprobe${process.pid % 100_000}`;
  try {
    execFileSync("ip", ["netns", "add", probe], { stdio: "ignore" });
    execFileSync("ip", ["netns", "delete", probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates a namespace with its veth link up, loopback up inside. Names and the subnet are drawn at random
 * (interface names must stay within 15 characters); a clash with another run is retried.
 *
 * @throws when the machine does not allow network namespaces (see {@link networkNamespacesAllowed})
 */
export async function startNetworkNamespace(): Promise<NetworkNamespace> {
  for (let attempt = 1; ; attempt++) {
    const n = 1 + Math.floor(Math.random() * 250);
    const name = `xns${process.pid % 100_000}n${n}`;
    const [host, inside] = [`xv${n}h${process.pid % 1000}`, `xv${n}n${process.pid % 1000}`];
    const [hostAddress, insideAddress] = [`10.231.${n}.1`, `10.231.${n}.2`];
    const inNs = (...args: string[]) => run("ip", ["netns", "exec", name, "ip", ...args]);
    try {
      await run("ip", ["netns", "add", name]);
    } catch (error) {
      if (attempt < 5) continue;
      throw error;
    }
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await run("ip", ["netns", "delete", name]).catch(() => {});
      await run("ip", ["link", "delete", host]).catch(() => {}); // gone with the namespace, unless that failed
    };
    try {
      await run("ip", ["link", "add", host, "type", "veth", "peer", "name", inside]);
      await run("ip", ["link", "set", inside, "netns", name]);
      await run("ip", ["addr", "add", `${hostAddress}/30`, "dev", host]);
      await run("ip", ["link", "set", host, "up"]);
      await inNs("addr", "add", `${insideAddress}/30`, "dev", inside);
      await inNs("link", "set", inside, "up");
      await inNs("link", "set", "lo", "up");
    } catch (error) {
      await close();
      if (attempt < 5) continue;
      throw error;
    }
    return {
      name,
      hostAddress,
      exec: ["ip", "netns", "exec", name],
      link: async (up) => {
        await run("ip", ["link", "set", host, up ? "up" : "down"]);
      },
      close,
    };
  }
}
