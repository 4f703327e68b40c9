// The operands of timeout(1), read as GNU coreutils reads them, so that a timeout(1) command line means the
// same to x-guard: durations (`strtod` in the C locale, then one suffix) and signals (`operand2sig`).
import { UsageError } from "@x/core/internal";

const { constants } = process.getBuiltinModule("node:os");

const suffixSeconds: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86_400 };
const decimal = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;
const hex = /^[+-]?0[xX](?:([\da-fA-F]+)\.?([\da-fA-F]*)|\.([\da-fA-F]+))(?:[pP]([+-]?\d+))?/;
const infinity = /^[+-]?inf(?:inity)?/i;

/** The value of a C hexadecimal floating constant matched by `hex` (`0x1.8p3` is 12). */
function hexValue(match: RegExpExecArray): number {
  const whole = match[1] ?? "";
  const fraction = match[2] ?? match[3] ?? "";
  const mantissa = Number.parseInt(`${whole}${fraction}` || "0", 16) / 16 ** fraction.length;
  const value = mantissa * 2 ** Number(match[4] ?? 0);
  return match[0].startsWith("-") ? -value : value;
}

/**
 * A duration as `timeout(1)` reads it: a floating-point number as C's `strtod` takes it (leading blanks, a
 * sign, decimals, an exponent, hexadecimal, `inf`, `infinity`), then at most one of the suffixes `s`, `m`,
 * `h` and `d`. It must not be negative or NaN.
 *
 * @returns milliseconds: `0` for zero or a number too small to be told from it (`1e-10000`, as GNU timeout 9
 *   reads it), `Infinity` for `inf` and for numbers too large for a double
 * @throws UsageError `invalid time interval 'TEXT'`
 */
export function parseTimeoutDuration(text: string): number {
  const body = text.replace(/^[ \t\n\v\f\r]+/, "");
  const inHex = hex.exec(body);
  const found = inHex ?? decimal.exec(body) ?? infinity.exec(body);
  let seconds = Number.NaN;
  let rest = "";
  if (found) {
    const token = found[0].replace(/^\+/, "");
    seconds = inHex ? hexValue(inHex) : Number(token.replace(/inf(?:inity)?$/i, "Infinity"));
    rest = body.slice(found[0].length);
  }
  const multiplier = suffixSeconds[rest];
  if (Number.isNaN(seconds) || !(seconds >= 0) || multiplier === undefined) {
    throw new UsageError(`invalid time interval '${text}'`);
  }
  return seconds * multiplier * 1000;
}

/** Real-time signals as glibc numbers them (32 and 33 are the C library's own). */
const rtMin = 34;
const rtMax = 64;

let numbers: Record<string, number> | undefined;

/**
 * Signal numbers by name, without `SIG`, as coreutils' `str2sig` knows them on Linux. Made on first use: a
 * command line without `-s` needs it only when a limit is reached.
 */
function signalNumbers(): Record<string, number> {
  if (numbers === undefined) {
    numbers = { EXIT: 0 };
    for (const [name, number] of Object.entries(constants.signals)) numbers[name.slice(3)] ??= number;
    numbers.CLD = constants.signals.SIGCHLD;
  }
  return numbers;
}

/**
 * The name `timeout -v` gives signal `number` (coreutils' `sig2str`): `TERM`, `EXIT` for 0, `RTMIN+n` or
 * `RTMAX-n` for real-time signals, else the number.
 */
export function signalName(number: number): string {
  if (number >= rtMin && number <= rtMax) {
    if (number === rtMin) return "RTMIN";
    if (number === rtMax) return "RTMAX";
    return number <= rtMin + (rtMax - rtMin) / 2 ? `RTMIN+${number - rtMin}` : `RTMAX-${rtMax - number}`;
  }
  for (const [name, value] of Object.entries(signalNumbers())) if (value === number) return name;
  return String(number);
}

/** The number of signal `name` (without `SIG`, upper case), or `undefined`. */
function numberOf(name: string): number | undefined {
  const known = signalNumbers();
  if (Object.hasOwn(known, name)) return known[name];
  const rt = /^RT(MIN|MAX)(?:([+-])(\d+))?$/.exec(name);
  if (!rt) return undefined;
  const offset = Number(rt[3] ?? 0);
  if (rt[2] !== undefined && rt[2] !== (rt[1] === "MIN" ? "+" : "-")) return undefined;
  const number = rt[1] === "MIN" ? rtMin + offset : rtMax - offset;
  return number >= rtMin && number <= rtMax ? number : undefined;
}

/**
 * A signal as `timeout -s` takes it (coreutils' `operand2sig`): a name in any case, with or without `SIG`
 * (`TERM`, `sigint`, `EXIT`, `RTMIN+1`, `SIGRTMAX`), or a number from 0 to 64, where an exit status of a
 * signalled process names its signal (`137` is 9, KILL).
 *
 * @returns the signal's number (0: only checks that the command exists, as `kill -0`)
 * @throws UsageError `'TEXT': invalid signal`
 */
export function parseTimeoutSignal(text: string): number {
  let number: number | undefined;
  if (/^\d/.test(text)) {
    if (/^\d+$/.test(text) && Number(text) <= 0x7fffffff) {
      const status = Number(text);
      const low = status & 0x7f;
      number = low !== 0 && low !== 0x7f ? low : status; // WIFSIGNALED(status) ? WTERMSIG(status) : status
    }
    if (number !== undefined && number !== 0 && signalName(number) === String(number)) number = undefined;
  } else {
    const upper = text.replace(/[a-z]/g, (c) => c.toUpperCase());
    number = numberOf(upper) ?? (upper.startsWith("SIG") ? numberOf(upper.slice(3)) : undefined);
  }
  if (number === undefined) throw new UsageError(`'${text}': invalid signal`);
  return number;
}
