import { badRequest } from './status-errors.js';

/** The protobuf wire format: varints and tagged fields, nothing Kubernetes-specific. */

export type Field = { no: number; wire: number; value: bigint | Buffer };

export function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw badRequest('protobuf: truncated varint');
    const b = buf[pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

export function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = readVarint(buf, pos);
    pos = p1;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, p2] = readVarint(buf, pos);
      out.push({ no, wire, value: v });
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      const end = p2 + Number(len);
      if (end > buf.length) throw badRequest('protobuf: truncated field');
      out.push({ no, wire, value: buf.subarray(p2, end) });
      pos = end;
    } else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(pos, pos + 4) });
      pos += 4;
    } else throw badRequest(`protobuf: unsupported wire type ${wire}`);
  }
  return out;
}

export const str = (f: Field): string => (f.value as Buffer).toString('utf8');
export const bytes = (f: Field): Buffer => f.value as Buffer;
export const int = (f: Field): number => Number(BigInt.asIntN(64, f.value as bigint));

