/** Test helpers for agents: the fake ERMrest arrives with the package. */
export const testingVersion = "0.1.0";
