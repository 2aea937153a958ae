//! One request and its replies on a fresh netlink socket: a dump (`NLM_F_DUMP`, replies until
//! `NLMSG_DONE`) or a single answer. The message types come from the rust-netlink crates; this
//! is only the exchange, which those crates leave to an async runtime we do not need.

use std::fmt::Debug;
use std::io;

use netlink_packet_core::{
    NetlinkDeserializable, NetlinkHeader, NetlinkMessage, NetlinkPayload, NetlinkSerializable, NLM_F_DUMP,
    NLM_F_REQUEST,
};
use netlink_sys::{Socket, SocketAddr};

/// A receive buffer larger than any datagram the kernel builds for a dump (it sizes them
/// after the reader's buffer, up to 32 KiB), so no reply is truncated.
const RECV_BUFFER: usize = 64 * 1024;

/// Send `request` on a new socket of netlink `protocol` and collect the inner messages of
/// the reply: every message of a dump, or the one answer of a plain request.
pub fn exchange<M>(protocol: isize, request: M, dump: bool) -> io::Result<Vec<M>>
where
    M: NetlinkSerializable + NetlinkDeserializable + Debug,
{
    let mut socket = Socket::new(protocol)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | if dump { NLM_F_DUMP } else { 0 };
    header.sequence_number = 1;
    let mut packet = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(request));
    packet.finalize();
    let mut buf = vec![0u8; packet.buffer_len()];
    packet.serialize(&mut buf);
    socket.send(&buf, 0)?;

    let mut replies = Vec::new();
    let mut buf = vec![0u8; RECV_BUFFER];
    loop {
        let n = socket.recv(&mut &mut buf[..], 0)?;
        let mut offset = 0;
        while offset < n {
            let msg = NetlinkMessage::<M>::deserialize(&buf[offset..n])
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("netlink reply: {e}")))?;
            let len = msg.header.length as usize;
            match msg.payload {
                NetlinkPayload::InnerMessage(m) => {
                    replies.push(m);
                    if !dump {
                        return Ok(replies);
                    }
                }
                NetlinkPayload::Done(_) => return Ok(replies),
                NetlinkPayload::Error(e) if e.code.is_some() => return Err(e.to_io()),
                NetlinkPayload::Error(_) => return Ok(replies), // an ACK
                NetlinkPayload::Noop => {}
                NetlinkPayload::Overrun(_) => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "netlink reply overran its buffer"))
                }
                _ => {}
            }
            if len == 0 {
                break;
            }
            offset += len;
        }
    }
}
