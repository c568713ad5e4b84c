// Media fixtures built in Node at test time, byte for byte, with no encoder and no network:
// a PNG (zlib + CRC-32) and an H.264 MP4 whose frames are I_PCM macroblocks (raw samples, so no
// real encoder is needed), with the moov box after the mdat so a player has to read the end of
// the file too. Frames are flat grey; the grey level says which second of the clip a frame is in.
import { deflateSync } from 'node:zlib';

// ---------------------------------------------------------------- PNG

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit RGB PNG; `pixel(x, y)` gives [r, g, b]. */
export function makePng(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const raw = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3); // filter byte 0, then the row
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3);
  }
  return new Uint8Array(Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', new Uint8Array(0)),
  ]));
}

// ---------------------------------------------------------------- H.264 (I_PCM) elementary stream

class BitWriter {
  private bytes: number[] = [];
  private cur = 0;
  private n = 0;
  bit(b: number): void {
    this.cur = (this.cur << 1) | (b & 1);
    if (++this.n === 8) {
      this.bytes.push(this.cur);
      this.cur = 0;
      this.n = 0;
    }
  }
  bits(value: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }
  /** Exp-Golomb ue(v). */
  ue(v: number): void {
    const x = v + 1;
    const len = Math.floor(Math.log2(x));
    this.bits(0, len);
    this.bits(x, len + 1);
  }
  /** Exp-Golomb se(v). */
  se(v: number): void {
    this.ue(v > 0 ? 2 * v - 1 : -2 * v);
  }
  align(): void {
    while (this.n !== 0) this.bit(0);
  }
  byte(b: number): void {
    this.bits(b, 8);
  }
  /** rbsp_trailing_bits: a stop bit, then zeros to the byte boundary. */
  trailing(): Uint8Array {
    this.bit(1);
    this.align();
    return Uint8Array.from(this.bytes);
  }
}

/** A NAL unit without start code: header byte, then the RBSP with emulation prevention. */
function nal(refIdc: number, type: number, rbsp: Uint8Array): Uint8Array {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const b of rbsp) {
    if (zeros >= 2 && b <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(b);
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return Uint8Array.from(out);
}

const PROFILE_BASELINE = 66;
const CONSTRAINTS = 0xc0; // constraint_set0 and set1: constrained baseline
const LEVEL = 30;

function sps(widthMbs: number, heightMbs: number): Uint8Array {
  const w = new BitWriter();
  w.byte(PROFILE_BASELINE);
  w.byte(CONSTRAINTS);
  w.byte(LEVEL);
  w.ue(0); // seq_parameter_set_id
  w.ue(0); // log2_max_frame_num_minus4
  w.ue(2); // pic_order_cnt_type 2: output order is decode order
  w.ue(1); // max_num_ref_frames
  w.bit(0); // gaps_in_frame_num_value_allowed_flag
  w.ue(widthMbs - 1);
  w.ue(heightMbs - 1);
  w.bit(1); // frame_mbs_only_flag
  w.bit(1); // direct_8x8_inference_flag
  w.bit(0); // frame_cropping_flag
  w.bit(0); // vui_parameters_present_flag
  return nal(3, 7, w.trailing());
}

function pps(): Uint8Array {
  const w = new BitWriter();
  w.ue(0); // pic_parameter_set_id
  w.ue(0); // seq_parameter_set_id
  w.bit(0); // entropy_coding_mode_flag: CAVLC
  w.bit(0); // bottom_field_pic_order_in_frame_present_flag
  w.ue(0); // num_slice_groups_minus1
  w.ue(0); // num_ref_idx_l0_default_active_minus1
  w.ue(0); // num_ref_idx_l1_default_active_minus1
  w.bit(0); // weighted_pred_flag
  w.bits(0, 2); // weighted_bipred_idc
  w.se(0); // pic_init_qp_minus26
  w.se(0); // pic_init_qs_minus26
  w.se(0); // chroma_qp_index_offset
  w.bit(1); // deblocking_filter_control_present_flag
  w.bit(0); // constrained_intra_pred_flag
  w.bit(0); // redundant_pic_cnt_present_flag
  return nal(3, 8, w.trailing());
}

/** One IDR picture of I_PCM macroblocks, every sample of luma `y`, chroma 128 (grey). */
function idrSlice(widthMbs: number, heightMbs: number, idrPicId: number, y: number): Uint8Array {
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(7); // slice_type: I (all slices of the picture)
  w.ue(0); // pic_parameter_set_id
  w.bits(0, 4); // frame_num (log2_max_frame_num = 4)
  w.ue(idrPicId); // idr_pic_id: differs between consecutive IDR pictures
  w.bit(0); // no_output_of_prior_pics_flag
  w.bit(0); // long_term_reference_flag
  w.se(0); // slice_qp_delta
  w.ue(1); // disable_deblocking_filter_idc: off
  for (let mb = 0; mb < widthMbs * heightMbs; mb++) {
    w.ue(25); // mb_type I_PCM
    w.align(); // pcm_alignment_zero_bit
    for (let i = 0; i < 256; i++) w.byte(y);
    for (let i = 0; i < 128; i++) w.byte(128);
  }
  return nal(3, 5, w.trailing());
}

// ---------------------------------------------------------------- MP4

function box(type: string, ...payload: Uint8Array[]): Uint8Array {
  const size = 8 + payload.reduce((n, p) => n + p.length, 0);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(size, 0);
  head.write(type, 4, 'latin1');
  return new Uint8Array(Buffer.concat([head, ...payload]));
}

function fullBox(type: string, version: number, flags: number, ...payload: Uint8Array[]): Uint8Array {
  return box(type, u32((version << 24) | flags), ...payload);
}

function u32(...values: number[]): Uint8Array {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return new Uint8Array(b);
}

function u16(...values: number[]): Uint8Array {
  const b = Buffer.alloc(2 * values.length);
  values.forEach((v, i) => b.writeUInt16BE(v & 0xffff, i * 2));
  return new Uint8Array(b);
}

const bytes = (...values: number[]) => Uint8Array.from(values);
const zeros = (n: number) => new Uint8Array(n);
const MATRIX = u32(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000);

export interface Clip {
  mp4: Uint8Array;
  width: number;
  height: number;
  fps: number;
  seconds: number;
  /** Luma of every frame in second `s` of the clip. */
  lumaOfSecond(s: number): number;
}

/**
 * A playable H.264 MP4: `seconds` × `fps` frames of `width` × `height` (multiples of 16), every
 * frame a keyframe, grey level stepping up each second. Layout: ftyp, mdat, moov.
 */
export function makeMp4({ width = 128, height = 96, fps = 10, seconds = 6 } = {}): Clip {
  const wMbs = width / 16;
  const hMbs = height / 16;
  if (!Number.isInteger(wMbs) || !Number.isInteger(hMbs)) throw new Error('width and height must be multiples of 16');
  const lumaOfSecond = (s: number) => 32 + 36 * s;
  const count = fps * seconds;
  const samples: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const slice = idrSlice(wMbs, hMbs, i % 2, lumaOfSecond(Math.floor(i / fps)));
    samples.push(new Uint8Array(Buffer.concat([u32(slice.length), slice]))); // 4-byte NAL length prefix
  }
  const spsNal = sps(wMbs, hMbs);
  const ppsNal = pps();

  const ftyp = box('ftyp', Buffer.from('isom'), u32(0x200), Buffer.from('isomiso2avc1mp41'));
  const mdat = box('mdat', ...samples);
  let offset = ftyp.length + 8;
  const offsets = samples.map((s) => {
    const at = offset;
    offset += s.length;
    return at;
  });

  const timescale = 1000;
  const delta = timescale / fps;
  const duration = count * delta;
  const avcC = box('avcC',
    bytes(1, PROFILE_BASELINE, CONSTRAINTS, LEVEL, 0xff, 0xe1), u16(spsNal.length), spsNal,
    bytes(1), u16(ppsNal.length), ppsNal);
  const avc1 = box('avc1',
    zeros(6), u16(1), // reserved, data_reference_index
    zeros(16), // pre_defined, reserved, pre_defined[3]
    u16(width, height), u32(0x00480000, 0x00480000, 0), u16(1), // resolution, reserved, frame_count
    zeros(32), // compressorname
    u16(0x0018, 0xffff), // depth, pre_defined = -1
    avcC);
  const stbl = box('stbl',
    fullBox('stsd', 0, 0, u32(1), avc1),
    fullBox('stts', 0, 0, u32(1, count, delta)),
    fullBox('stsc', 0, 0, u32(1, 1, 1, 1)), // one sample per chunk
    fullBox('stsz', 0, 0, u32(0, count, ...samples.map((s) => s.length))),
    fullBox('stco', 0, 0, u32(count, ...offsets)));
  const minf = box('minf',
    fullBox('vmhd', 0, 1, u16(0, 0, 0, 0)),
    box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))),
    stbl);
  const mdia = box('mdia',
    fullBox('mdhd', 0, 0, u32(0, 0, timescale, duration), u16(0x55c4, 0)), // language "und"
    fullBox('hdlr', 0, 0, u32(0), Buffer.from('vide'), zeros(12), Buffer.from('VideoHandler\0')),
    minf);
  const tkhd = fullBox('tkhd', 0, 3,
    u32(0, 0, 1, 0, duration, 0, 0), u16(0, 0, 0, 0), MATRIX, u32(width << 16, height << 16));
  const mvhd = fullBox('mvhd', 0, 0,
    u32(0, 0, timescale, duration, 0x00010000), u16(0x0100, 0), zeros(8), MATRIX, zeros(24), u32(2));
  const moov = box('moov', mvhd, box('trak', tkhd, mdia));

  return {
    mp4: new Uint8Array(Buffer.concat([ftyp, mdat, moov])),
    width,
    height,
    fps,
    seconds,
    lumaOfSecond,
  };
}
