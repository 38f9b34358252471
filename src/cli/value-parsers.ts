import { UsageError } from '../errors.js';

// Flag and argument parsers whose errors describe a bad value by its length, never by its text:
// a key pasted into the wrong place must not reach a terminal or a log.

/** Like commander's .choices(), whose message quotes the value. */
export function choiceParser(name: string, choices: readonly string[]) {
  return (value: string): string => {
    if (choices.includes(value)) return value;
    throw new UsageError(`${name} must be one of ${choices.join(', ')}, got a ${value.length}-character value`);
  };
}

export function processIdParser(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${flag} must be a process id, got a ${value.length}-character value`);
    return n;
  };
}
