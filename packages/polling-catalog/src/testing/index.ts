export {
  type FailNextOptions,
  type FakeColumnType,
  type FakeErmrest,
  type FakeErmrestOptions,
  type FakeRequestRecord,
  type FakeTableOptions,
  startFakeErmrest,
} from "./fake-ermrest.js";
