export {
  type FailNextOptions,
  type FakeColumnType,
  type FakeErmrest,
  type FakeErmrestDescription,
  type FakeErmrestOptions,
  type FakeRequestRecord,
  type FakeTableOptions,
  startFakeErmrest,
} from "./fake-ermrest.js";
