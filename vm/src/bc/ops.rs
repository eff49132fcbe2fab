//! The instruction set, declared once.
//!
//! `for_each_op!` lists every opcode with its operands and documents its
//! stack effect. The enum [`Op`], the encoder ([`Op::encode`]), the decoder
//! ([`Op::decode`]) and the disassembler ([`Op::disas`]) are all generated
//! from it.
//!
//! Naming: ops are verbs or nouns in CamelCase (`Call`, `Const`); operand
//! names say what they index (`idx` = constant pool, `site` = call-site
//! table, `chunk` = nested-chunk table, `target` = absolute code offset).
//! Every operand is a little-endian `u32`; the opcode is one byte.

/// Calls `$m!` with the opcode table.
#[macro_export]
macro_rules! for_each_op {
    ($m:ident) => {
        $m! {
            /// Push constant `idx`. Stack: -> v
            Const = 0 { idx },
            /// Push null. Stack: -> null
            Null = 1 {},
            /// Push true. Stack: -> true
            True = 2 {},
            /// Push false. Stack: -> false
            False = 3 {},
            /// Push positional context value `$n` (1-based). Stack: -> v
            Arg = 4 { n },
            /// Push named context value `$name` (`name` = constant index of
            /// the name string). Stack: -> v
            Var = 5 { name },
            /// Push a lambda over nested chunk `chunk` bound to the current
            /// context. Stack: -> lambda
            Closure = 6 { chunk },
            /// Build a list of the top `n` values. Stack: v1..vn -> list
            List = 7 { n },
            /// Build a dict of the top `n` key/value pairs.
            /// Stack: k1 v1 .. kn vn -> dict
            Dict = 8 { n },
            /// Build a mapping rule. Stack: k v -> pair
            Pair = 9 {},
            /// Call through call site `site` (its argument count is in the
            /// site). Stack: a1..an -> result
            Call = 10 { site },
            /// Attribute access `recv.name` through site `site` (`#attr`),
            /// with a fast path for dict keys. Stack: recv -> v
            Attr = 11 { site },
            /// `+` with numeric/string fast paths, else site. Stack: a b -> r
            Add = 12 { site },
            /// `-`. Stack: a b -> r
            Sub = 13 { site },
            /// `*`. Stack: a b -> r
            Mul = 14 { site },
            /// `/`. Stack: a b -> r
            Div = 15 { site },
            /// `mod`. Stack: a b -> r
            Mod = 16 { site },
            /// `=`. Stack: a b -> bool
            Eq = 17 { site },
            /// `!=`. Stack: a b -> bool
            Ne = 18 { site },
            /// `<`. Stack: a b -> bool
            Lt = 19 { site },
            /// `<=`. Stack: a b -> bool
            Le = 20 { site },
            /// `>`. Stack: a b -> bool
            Gt = 21 { site },
            /// `>=`. Stack: a b -> bool
            Ge = 22 { site },
            /// Unary `-`. Stack: a -> r
            Neg = 23 { site },
            /// `not`. Stack: a -> bool
            Not = 24 {},
            /// If the top is falsy jump to `target` keeping it, else pop it
            /// (`and`). Stack: a -> a | -
            JumpIfFalseKeep = 25 { target },
            /// If the top is truthy jump to `target` keeping it, else pop
            /// it (`or`). Stack: a -> a | -
            JumpIfTrueKeep = 26 { target },
            /// If the top is null jump to `target` keeping it (`?.`).
            /// Stack: a -> a
            JumpIfNullKeep = 27 { target },
            /// Jump to `target`.
            Jump = 28 { target },
            /// Pop into local `slot`. Stack: a ->
            StoreLocal = 29 { slot },
            /// Push local `slot`. Stack: -> a
            LoadLocal = 30 { slot },
            /// Drop the top. Stack: a ->
            Pop = 31 {},
            /// Return the top. Stack: a ->
            Return = 32 {},
            /// Check the `in` membership with fast paths, else site.
            /// Stack: a b -> bool
            In = 33 { site },
        }
    };
}

macro_rules! define_ops {
    ($( $(#[$doc:meta])* $name:ident = $code:literal { $($field:ident),* } ,)*) => {
        /// A decoded instruction.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub enum Op {
            $( $(#[$doc])* $name { $($field: u32),* }, )*
        }

        impl Op {
            /// Appends the encoding of this instruction.
            pub fn encode(&self, out: &mut Vec<u8>) {
                match *self {
                    $( Op::$name { $($field),* } => {
                        out.push($code);
                        $( out.extend_from_slice(&$field.to_le_bytes()); )*
                    } )*
                }
            }
            /// Decodes the instruction at `pc`; returns it and the next pc.
            #[inline(always)]
            pub fn decode(code: &[u8], pc: usize) -> Option<(Op, usize)> {
                let opc = *code.get(pc)?;
                #[allow(unused_mut, unused_variables)]
                let mut at = pc + 1;
                #[allow(unused_macros)]
                macro_rules! rd {
                    () => {{
                        let b = code.get(at..at + 4)?;
                        at += 4;
                        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
                    }};
                }
                let op = match opc {
                    $( $code => Op::$name { $($field: rd!()),* }, )*
                    _ => return None,
                };
                Some((op, at))
            }
            /// The mnemonic.
            pub fn mnemonic(&self) -> &'static str {
                match self { $( Op::$name { .. } => stringify!($name), )* }
            }
            /// The operands as `name=value` text.
            pub fn operands(&self) -> String {
                #[allow(unused_mut)]
                let mut parts: Vec<String> = Vec::new();
                match *self {
                    $( Op::$name { $($field),* } => {
                        $( parts.push(format!("{}={}", stringify!($field), $field)); )*
                    } )*
                }
                parts.join(" ")
            }
            /// Encoded size in bytes.
            pub fn size(&self) -> usize {
                let mut v = Vec::new();
                self.encode(&mut v);
                v.len()
            }
        }
    };
}

for_each_op!(define_ops);

/// Decodes a whole code buffer.
pub fn decode_all(code: &[u8]) -> Option<Vec<(usize, Op)>> {
    let mut out = Vec::new();
    let mut pc = 0;
    while pc < code.len() {
        let (op, next) = Op::decode(code, pc)?;
        out.push((pc, op));
        pc = next;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn roundtrip() {
        let ops = vec![
            Op::Const { idx: 7 },
            Op::Null {},
            Op::Call { site: 300 },
            Op::JumpIfFalseKeep { target: 0x01020304 },
            Op::Return {},
        ];
        let mut buf = Vec::new();
        for o in &ops {
            o.encode(&mut buf);
        }
        let back: Vec<Op> = decode_all(&buf).unwrap().into_iter().map(|x| x.1).collect();
        assert_eq!(back, ops);
        assert!(Op::decode(&[250], 0).is_none());
        assert!(Op::decode(&[0, 1], 0).is_none());
    }
}
