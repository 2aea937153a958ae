//! eBPF instruction encoding (the subset the bucket program needs) and the program.
//!
//! Encoding per the kernel's `Documentation/bpf/standardization/instruction-set.rst`: 8
//! bytes `{opcode, dst:4|src:4, off:i16, imm:i32}`, little-endian on x86-64.

/// One eBPF instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    pub code: u8,
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: (src << 4) | (dst & 0x0f), off, imm }
}

// registers
pub const R0: u8 = 0;
pub const R1: u8 = 1;
pub const R2: u8 = 2;
pub const R3: u8 = 3;
pub const R4: u8 = 4;
pub const R6: u8 = 6;
pub const R7: u8 = 7;
pub const R8: u8 = 8;
pub const R10: u8 = 10;

pub const fn mov64_reg(dst: u8, src: u8) -> Insn { insn(0xbf, dst, src, 0, 0) }
pub const fn mov64_imm(dst: u8, imm: i32) -> Insn { insn(0xb7, dst, 0, 0, imm) }
pub const fn add64_imm(dst: u8, imm: i32) -> Insn { insn(0x07, dst, 0, 0, imm) }
pub const fn add64_reg(dst: u8, src: u8) -> Insn { insn(0x0f, dst, src, 0, 0) }
pub const fn and64_imm(dst: u8, imm: i32) -> Insn { insn(0x57, dst, 0, 0, imm) }
pub const fn div64_imm(dst: u8, imm: i32) -> Insn { insn(0x37, dst, 0, 0, imm) }
pub const fn ldx_w(dst: u8, src: u8, off: i16) -> Insn { insn(0x61, dst, src, off, 0) }
pub const fn ldx_b(dst: u8, src: u8, off: i16) -> Insn { insn(0x71, dst, src, off, 0) }
pub const fn ldx_dw(dst: u8, src: u8, off: i16) -> Insn { insn(0x79, dst, src, off, 0) }
pub const fn stx_w(dst: u8, src: u8, off: i16) -> Insn { insn(0x63, dst, src, off, 0) }
pub const fn stx_dw(dst: u8, src: u8, off: i16) -> Insn { insn(0x7b, dst, src, off, 0) }
pub const fn jeq_imm(dst: u8, imm: i32, off: i16) -> Insn { insn(0x15, dst, 0, off, imm) }
pub const fn jne_imm(dst: u8, imm: i32, off: i16) -> Insn { insn(0x55, dst, 0, off, imm) }
pub const fn jeq_reg(dst: u8, src: u8, off: i16) -> Insn { insn(0x1d, dst, src, off, 0) }
pub const fn call(helper: i32) -> Insn { insn(0x85, 0, 0, 0, helper) }
pub const fn exit() -> Insn { insn(0x95, 0, 0, 0, 0) }

/// `dst = map` (two instructions: `BPF_LD | BPF_IMM | BPF_DW` with `BPF_PSEUDO_MAP_FD`).
pub const fn ld_map_fd(dst: u8, fd: i32) -> [Insn; 2] {
    [insn(0x18, dst, 1, 0, fd), insn(0, 0, 0, 0, 0)]
}

// helpers (include/uapi/linux/bpf.h, enum bpf_func_id)
pub const BPF_FUNC_MAP_LOOKUP_ELEM: i32 = 1;
pub const BPF_FUNC_KTIME_GET_NS: i32 = 5;
pub const BPF_FUNC_SKB_LOAD_BYTES: i32 = 26;

/// Offsets in `struct __sk_buff`.
const SKB_LEN: i16 = 0;
const SKB_PROTOCOL: i16 = 16;
/// `htons(ETH_P_IP)` as the program sees `skb->protocol` on little-endian.
const ETH_P_IP_BE: i32 = 0x0008;
/// TOS byte of an IPv4 header behind a 14-byte Ethernet header (tc programs see the MAC
/// header on ingress and egress).
const IPV4_TOS_OFFSET: i32 = 15;
/// TCX_NEXT (= TC_ACT_UNSPEC): let the packet continue untouched.
const TCX_NEXT: i32 = -1;

/// Value layout in the map: `{epoch, bytes, packets, ce}` as u64s.
pub const VALUE_SIZE: u32 = 32;

/// The bucket program. Per packet: `b = ktime_ns / bucket_ns`; slot `(b & mask) + base`;
/// on this CPU's copy, if the slot holds another bucket's epoch, restart it at `b`; add
/// `skb->len`, 1 packet and, for IPv4 with ECN = 11, 1 CE mark. Per-CPU values need no
/// atomics and a program never migrates mid-run, so the restart is race-free.
pub fn bucket_program(map_fd: i32, bucket_ns: i32, mask: i32, base: i32) -> Vec<Insn> {
    let mut p = Vec::with_capacity(40);
    p.push(mov64_reg(R6, R1)); // r6 = skb
    p.push(call(BPF_FUNC_KTIME_GET_NS));
    p.push(div64_imm(R0, bucket_ns));
    p.push(mov64_reg(R7, R0)); // r7 = bucket id
    p.push(and64_imm(R0, mask));
    p.push(add64_imm(R0, base));
    p.push(stx_w(R10, R0, -4)); // key on the stack
    p.extend(ld_map_fd(R1, map_fd));
    p.push(mov64_reg(R2, R10));
    p.push(add64_imm(R2, -4));
    p.push(call(BPF_FUNC_MAP_LOOKUP_ELEM));
    let to_out_1 = p.len();
    p.push(jeq_imm(R0, 0, 0)); // patched: no value -> out
    p.push(mov64_reg(R8, R0)); // r8 = value
    p.push(ldx_dw(R1, R8, 0));
    p.push(jeq_reg(R1, R7, 5)); // same epoch -> add
    p.push(stx_dw(R8, R7, 0)); // restart the slot at this bucket
    p.push(mov64_imm(R1, 0));
    p.push(stx_dw(R8, R1, 8));
    p.push(stx_dw(R8, R1, 16));
    p.push(stx_dw(R8, R1, 24));
    // add:
    p.push(ldx_w(R1, R6, SKB_LEN));
    p.push(ldx_dw(R2, R8, 8));
    p.push(add64_reg(R2, R1));
    p.push(stx_dw(R8, R2, 8));
    p.push(ldx_dw(R2, R8, 16));
    p.push(add64_imm(R2, 1));
    p.push(stx_dw(R8, R2, 16));
    // ECN CE for IPv4
    p.push(ldx_w(R1, R6, SKB_PROTOCOL));
    let to_out_2 = p.len();
    p.push(jne_imm(R1, ETH_P_IP_BE, 0));
    p.push(mov64_reg(R1, R6));
    p.push(mov64_imm(R2, IPV4_TOS_OFFSET));
    p.push(mov64_reg(R3, R10));
    p.push(add64_imm(R3, -8));
    p.push(mov64_imm(R4, 1));
    p.push(call(BPF_FUNC_SKB_LOAD_BYTES));
    let to_out_3 = p.len();
    p.push(jne_imm(R0, 0, 0));
    p.push(ldx_b(R1, R10, -8));
    p.push(and64_imm(R1, 3));
    let to_out_4 = p.len();
    p.push(jne_imm(R1, 3, 0));
    p.push(ldx_dw(R2, R8, 24));
    p.push(add64_imm(R2, 1));
    p.push(stx_dw(R8, R2, 24));
    let out = p.len();
    p.push(mov64_imm(R0, TCX_NEXT));
    p.push(exit());
    for j in [to_out_1, to_out_2, to_out_3, to_out_4] {
        p[j].off = (out - j - 1) as i16;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_matches_the_kernel_layout() {
        // r0 = r1 is bf 10 00 00 00 00 00 00 (dst in the low nibble, src in the high)
        let i = mov64_reg(R0, R1);
        assert_eq!((i.code, i.regs, i.off, i.imm), (0xbf, 0x10, 0, 0));
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }

    #[test]
    fn map_fd_load_is_a_pseudo_wide_instruction() {
        let [a, b] = ld_map_fd(R1, 7);
        assert_eq!((a.code, a.regs, a.imm), (0x18, 0x11, 7));
        assert_eq!((b.code, b.imm), (0, 0));
    }

    #[test]
    fn every_jump_of_the_program_lands_on_the_exit_sequence() {
        let p = bucket_program(3, 100_000, 0x7fff, 0);
        let out = p.len() - 2;
        assert_eq!(p[out], mov64_imm(R0, TCX_NEXT));
        assert_eq!(p[p.len() - 1], exit());
        for (i, ins) in p.iter().enumerate() {
            if ins.code == 0x15 || ins.code == 0x55 {
                assert_eq!(i as i64 + 1 + ins.off as i64, out as i64, "jump at {i}");
            }
        }
    }
}
