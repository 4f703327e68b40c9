/** The keys of one dependency's checkpoint, `K + D + "_checkpoint_…"`. */
export interface DependencyKeys {
  readonly state: string;
  readonly marker: string;
  readonly isDown: string;
}

/** Every key a checkpoint reads and writes. */
export interface CheckpointKeys {
  readonly state: string;
  readonly stateMarker: string;
  readonly dependencies: readonly DependencyKeys[];
}

/**
 * Slipstream's key layout, character for character, plus the is-down key: with
 * `K = prefix + "_" + name + "_"`, the dependent's keys are `K + "_state"` and `K + "_state_marker"`, and a
 * dependency `D` has `K + D + "_checkpoint_state"`, `K + D + "_checkpoint_marker"` and
 * `K + D + "_checkpoint_is_down"`.
 */
export function checkpointKeys(
  prefix: string,
  name: string,
  dependencyNames: readonly string[],
): CheckpointKeys {
  const base = `${prefix}_${name}_`;
  return {
    state: `${base}_state`,
    stateMarker: `${base}_state_marker`,
    dependencies: dependencyNames.map((dependency) => ({
      state: `${base}${dependency}_checkpoint_state`,
      marker: `${base}${dependency}_checkpoint_marker`,
      isDown: `${base}${dependency}_checkpoint_is_down`,
    })),
  };
}
