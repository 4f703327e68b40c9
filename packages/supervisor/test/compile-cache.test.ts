import { readdirSync } from "node:fs";
import {
  otherUnavailableNote,
  otherUserUnavailable,
  tmpWithOtherUsersCompileCache,
} from "@x/test-support/other-user";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli-process.js";

describe.skipIf(otherUserUnavailable !== undefined)(
  `x-supervisor's compile cache${otherUnavailableNote}`,
  () => {
    it("is never kept in a node-compile-cache directory another user made first", async () => {
      const { env, theirs, own } = tmpWithOtherUsersCompileCache();
      const proc = runCli(["--version"], env);
      expect(await proc.exited).toBe(0);
      expect(readdirSync(theirs)).toEqual([]);
      expect(readdirSync(own)).toEqual([expect.stringMatching(/^v\d/)]);
    });
  },
);
