import { MAX_DURATION_MS, parseOptions, v } from "@x/core/internal";
import { ErrorCode, PollingCatalogError } from "./errors.js";
import type { Row, RowTransform } from "./polling-catalog.js";

/** Options of {@link leaseClaim}. Column names and states are given as stored; the paths encode them. */
export interface LeaseClaimOptions {
  /** The table, as written in URLs (`S:Job`, its parts already percent-encoded). Required. */
  table: string;
  /** Who claims: written to `ownerColumn` with each claim, e.g. `"agent-7@host"`. Required, non-empty. */
  owner: string;
  /**
   * How long a claim holds, in milliseconds (> 0, at most 2 147 483 647): a claimed row whose lease ran out
   * (its agent died, or could not write the completion) is a candidate again. Renew it by claiming again
   * before it ends if a job can take longer. Required.
   */
  leaseMs: number;
  /** Candidates read per call (`?limit=N`). Default `100`. */
  limit?: number;
  /** The column holding the row's state. Default `"state"`. */
  stateColumn?: string;
  /** The state of a row waiting for an agent. Default `"queued"`. */
  readyState?: string;
  /** The state of a claimed row. Default `"claimed"`. */
  claimedState?: string;
  /** The column that records who holds the claim. Default `"owner"`. */
  ownerColumn?: string;
  /** The column (a `timestamptz`) that records until when the claim holds, as an ISO 8601 string. Default `"lease_until"`. */
  leaseColumn?: string;
}

/** What {@link leaseClaim} returns: paths and a transform for {@link PollingErmrestCatalog.stateChangeOnce}. */
export interface LeaseClaim {
  /** The rows waiting for an agent: `/entity/<table>/<state>=<ready>?limit=N`. */
  queryPath: string;
  /** Claimed rows, the oldest lease first: `/entity/<table>/<state>=<claimed>@sort(<lease>)?limit=N`. */
  expiredPath: string;
  /**
   * The conditional claim: `/attributegroup/<table>/RID,expected:=<state>,held:=<lease>;<state>,<lease>,<owner>`.
   * A row is taken only while it still has the state and lease its candidate had, so of two agents reclaiming
   * the same expired row one matches nothing.
   */
  updatePath: string;
  /**
   * Claims a ready row, or a claimed row whose lease ran out (at the time of the call); drops any other row.
   * The update writes the claimed state, `owner` and a lease `leaseMs` from now.
   */
  transform: RowTransform;
}

const leaseSchema = v
  .object({
    table: v.string({ error: "a table name such as S:Job" }).min(1),
    owner: v.string({ error: "a non-empty string" }).min(1),
    leaseMs: v
      .number({ error: `a number of milliseconds > 0 and ≤ ${MAX_DURATION_MS}` })
      .refine((value) => value > 0 && value <= MAX_DURATION_MS, {
        error: `a number of milliseconds > 0 and ≤ ${MAX_DURATION_MS}`,
      }),
    limit: v.number({ error: "an integer ≥ 1" }).int().min(1).default(100),
    stateColumn: v.string().min(1).default("state"),
    readyState: v.string().default("queued"),
    claimedState: v.string().default("claimed"),
    ownerColumn: v.string().min(1).default("owner"),
    leaseColumn: v.string().min(1).default("lease_until"),
  })
  .strict();

/**
 * A claim with a lease, for `stateChangeOnce` with `spread`: each claim records who holds the row and until
 * when, and a row whose lease ran out is claimed again by another agent, so that no row stays claimed for
 * ever when its agent dies. Neither ERMrest nor deriva-py has leases; this builds them from ordinary columns
 * and conditional updates.
 *
 * Look for ready rows first (threading `idleEtag`), then, when there are none, for expired claims (without
 * `idleEtag`: time passes without the catalog changing). Mark a row complete conditionally on still holding it
 * (`…/RID,mine:=owner;state`), so a late completion of a reclaimed row matches nothing.
 *
 * @example
 * ```ts
 * const lease = leaseClaim({ table: "S:Job", owner: "agent-1", leaseMs: 600_000 });
 * let { batch, idleEtag } = await catalog.stateChangeOnce(lease.queryPath, lease.updatePath, lease.transform, null, { spread: true });
 * if (batch.length === 0) ({ batch } = await catalog.stateChangeOnce(lease.expiredPath, lease.updatePath, lease.transform, null, { spread: true }));
 * ```
 * @throws {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_INVALID_OPTION` on a bad option
 */
export function leaseClaim(options: LeaseClaimOptions): LeaseClaim {
  const o = parseOptions(leaseSchema, options, ErrorCode.INVALID_OPTION, PollingCatalogError);
  const e = encodeURIComponent;
  const [state, lease, owner] = [e(o.stateColumn), e(o.leaseColumn), e(o.ownerColumn)];
  return {
    queryPath: `/entity/${o.table}/${state}=${e(o.readyState)}?limit=${o.limit}`,
    expiredPath: `/entity/${o.table}/${state}=${e(o.claimedState)}@sort(${lease})?limit=${o.limit}`,
    updatePath: `/attributegroup/${o.table}/RID,expected:=${state},held:=${lease};${state},${lease},${owner}`,
    transform: (row: Row) => {
      const now = Date.now();
      const current = row[o.stateColumn];
      const held = row[o.leaseColumn] ?? null;
      const ready = current === o.readyState;
      const expired = current === o.claimedState && typeof held === "string" && Date.parse(held) <= now;
      if (!ready && !expired) return null;
      return {
        RID: row.RID,
        expected: current,
        held,
        [o.stateColumn]: o.claimedState,
        [o.leaseColumn]: new Date(now + o.leaseMs).toISOString(),
        [o.ownerColumn]: o.owner,
      };
    },
  };
}
