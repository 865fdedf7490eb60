//! Networking, reduced to what seed 002 shows: one TCP connection receiving a bulk
//! transfer over the machine's link (net/ipv4/tcp_input.c, tcp.c, net/core/sock.c).
//!
//! The peer sends as fast as the receiver lets it: it keeps at most the advertised window
//! in flight, the link (or the bus behind the NIC) delivers payload at its rate, and a
//! window update reaches the peer and turns into new data one round trip after the
//! receiver sends it. The receiver sends it when its reader has taken data off the queue
//! (with the prequeue of 2.4-2.6, segments are processed in the reader's context, so a busy
//! reader also delays the ACKs: tcp_prequeue, tcp_cleanup_rbuf). Hence the two limits the
//! article saw: throughput = min(path rate, window / (RTT + the reader's delay)), and, when
//! the window is large, the reader's CPU (a copy per byte at copy_bw plus the per-segment
//! cost of the receive path).
//!
//! The window comes from the socket's receive buffer (sk_rcvbuf: tcp_rmem[1] at creation,
//! 2 x SO_RCVBUF capped at net.core.rmem_max when the program sets it) through
//! tcp_win_from_space and net.ipv4.tcp_adv_win_scale; since 2.6.7 tcp_rcv_space_adjust grows
//! sk_rcvbuf towards tcp_rmem[2] as the reader drains more per round trip
//! (net.ipv4.tcp_moderate_rcvbuf), unless SO_RCVBUF locked it. Bytes waiting in the
//! receive queue hold kernel memory (their skbs' truesize), counted as kernel pages.
//!
//! Not modelled: slow start and congestion (a LAN with no loss: the window is the limit
//! within a few round trips), the sender's own buffer limits, delayed-ACK timers.

use crate::Kernel;
use crate::mm::KernelOwner;
use memtwin_engine::{Ns, TaskId, NS_PER_SEC};
use std::collections::VecDeque;

/// IPv4 + TCP headers with the timestamp option (on by default since 2.2).
const TCP_IP_HEADERS: u64 = 20 + 20 + 12;
/// Ethernet framing on the wire: preamble 8, header 14, FCS 4, inter-frame gap 12.
const ETH_WIRE_OVERHEAD: u64 = 8 + 14 + 4 + 12;
/// Ethernet header and FCS, which cross the NIC's bus with the packet.
const ETH_FRAME_OVERHEAD: u64 = 14 + 4;
/// struct sk_buff and skb_shared_info alongside each receive buffer (2.4-2.6 sizes).
const SKB_OVERHEAD: u64 = 256;
/// The largest window a 16-bit field advertises without window scaling.
const MAX_UNSCALED_WINDOW: u64 = 65535;
/// TCP_MAX_WSCALE.
const MAX_WSCALE: u32 = 14;
/// SOCK_MIN_RCVBUF (2.4: 256; today 2 KiB + skb): the floor of a setsockopt'd buffer.
const SOCK_MIN_RCVBUF: u64 = 2048 + SKB_OVERHEAD;

/// What a receive call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvProgress {
    /// Bytes copied to the reader.
    pub bytes: u64,
    /// The reader must sleep until then (interruptible: a socket wait is S, not D).
    pub wait_until: Option<Ns>,
    /// The peer has sent everything and the reader has it all (the FIN was seen).
    pub eof: bool,
}

/// The receiving end of one TCP connection carrying `total` bytes to this machine.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    pub total: u64,
    /// Payload bytes per segment (MTU less IP, TCP and timestamp headers).
    pub mss: u64,
    /// Payload bytes/s the path delivers: the line rate less framing, or the NIC's bus.
    pub path_bw: f64,
    pub rtt: Ns,
    /// sk_rcvbuf, bytes.
    pub rcvbuf: u64,
    /// SO_RCVBUF was set: the kernel does not autotune this socket (SOCK_RCVBUF_LOCK).
    pub locked: bool,
    /// Memory one received segment holds while queued (skb truesize).
    pub truesize: u64,
    /// Bytes arrived (rcv_nxt), as a fluid.
    arrived: f64,
    /// Arrivals are computed up to this time.
    t_arr: Ns,
    /// The right edge of the window the peer is sending into.
    edge: u64,
    /// Window updates on their way: (when the data they release starts arriving, edge).
    updates: VecDeque<(Ns, u64)>,
    /// The last right edge announced.
    announced: u64,
    /// Bytes the reader has taken (copied_seq).
    pub copied: u64,
    /// tcp_rcv_space_adjust state: rcvq_space.space, .seq, .time.
    space: u64,
    space_seq: u64,
    space_time: Ns,
    /// Kernel pages held for queued data.
    pages: u64,
    /// Segments received (for interrupts and the receive cost).
    segs_charged: f64,
    pub started: Ns,
    /// Largest sk_rcvbuf reached (for reports and tests).
    pub max_rcvbuf: u64,
}

impl TcpReceiver {
    /// tcp_win_from_space: the part of `space` bytes of buffer offered as window.
    pub fn win_from_space(space: u64, adv_win_scale: i32) -> u64 {
        if adv_win_scale <= 0 {
            space >> (-adv_win_scale).min(63) as u32
        } else {
            space - (space >> (adv_win_scale.min(63) as u32))
        }
    }

    /// Bytes queued and not yet read.
    pub fn queued(&self) -> u64 {
        (self.arrived as u64).saturating_sub(self.copied)
    }

    /// Everything has been read.
    pub fn done(&self) -> bool {
        self.copied >= self.total
    }
}

impl Kernel {
    fn adv_win_scale(&self) -> i32 {
        self.sysctl.tcp_adv_win_scale
    }

    /// The largest window this socket can ever advertise: 64 KiB without window scaling,
    /// else 65535 << wscale where tcp_select_initial_window chose wscale for
    /// max(tcp_rmem[2], rmem_max).
    fn max_window(&self) -> u64 {
        if self.sysctl.tcp_window_scaling == 0 {
            return MAX_UNSCALED_WINDOW;
        }
        let space = self.sysctl.tcp_rmem[2].max(self.sysctl.rmem_max);
        let mut wscale = 0;
        while (space >> wscale) > MAX_UNSCALED_WINDOW && wscale < MAX_WSCALE {
            wscale += 1;
        }
        MAX_UNSCALED_WINDOW << wscale
    }

    /// The window offered with `queued` bytes waiting: tcp_space() of what is left of
    /// sk_rcvbuf once their skbs are counted.
    fn tcp_free_window(&self, s: &TcpReceiver) -> u64 {
        let held = s.queued().div_ceil(s.mss) * s.truesize;
        let free = s.rcvbuf.saturating_sub(held);
        let w = TcpReceiver::win_from_space(free, self.adv_win_scale()).min(self.max_window());
        // An empty queue always takes a segment (tcp_fixup_rcvbuf sizes the buffer so that
        // the window holds at least one MSS), so a connection never stalls for good.
        if s.queued() == 0 {
            w.max(s.mss)
        } else {
            w
        }
    }

    /// Open the receiving end of a connection over which the peer will send `total` bytes.
    /// `so_rcvbuf`: the program's setsockopt(SO_RCVBUF), if any. The first data arrives one
    /// round trip from now (the request goes out, the peer starts sending).
    pub fn tcp_open_receiver(&mut self, total: u64, so_rcvbuf: Option<u64>) -> TcpReceiver {
        let net = self.machine.net.clone();
        let mss = (net.mtu as u64).saturating_sub(TCP_IP_HEADERS).max(64);
        let wire = mss as f64 / (mss + TCP_IP_HEADERS + ETH_WIRE_OVERHEAD) as f64 * net.link_bps / 8.0;
        let bus = net
            .bus_bw
            .map(|b| b * mss as f64 / (mss + TCP_IP_HEADERS + ETH_FRAME_OVERHEAD) as f64)
            .unwrap_or(f64::INFINITY);
        // A receive buffer holds a frame-sized allocation (MTU + Ethernet header, rounded up
        // to a power of two by the slab) plus the skb metadata.
        let truesize = (net.mtu as u64 + ETH_FRAME_OVERHEAD).next_power_of_two() + SKB_OVERHEAD;
        let (rcvbuf, locked) = match so_rcvbuf {
            // sock_setsockopt: min(val, rmem_max), doubled for the skb overhead.
            Some(v) => ((v.min(self.sysctl.rmem_max) * 2).max(SOCK_MIN_RCVBUF), true),
            // tcp_init_sock: sk_rcvbuf = tcp_rmem[1].
            None => (self.sysctl.tcp_rmem[1], false),
        };
        let now = self.now;
        let mut s = TcpReceiver {
            total,
            mss,
            path_bw: wire.min(bus),
            rtt: net.rtt_ns,
            rcvbuf,
            locked,
            truesize,
            arrived: 0.0,
            t_arr: now,
            edge: 0,
            updates: VecDeque::new(),
            announced: 0,
            copied: 0,
            // tcp_init_buffer_space: rcvq_space.space starts at the initial window.
            space: 10 * mss,
            space_seq: 0,
            space_time: now,
            pages: 0,
            segs_charged: 0.0,
            started: now,
            max_rcvbuf: rcvbuf,
        };
        let w = self.tcp_free_window(&s);
        s.announced = w;
        s.updates.push_back((now + s.rtt, w));
        s
    }

    /// Let the peer's data arrive up to now: at the path rate while the window allows.
    fn tcp_advance(&mut self, s: &mut TcpReceiver) {
        let now = self.now;
        while s.t_arr < now {
            let next = s.updates.front().map_or(now, |&(t, _)| t.clamp(s.t_arr, now));
            let dt = (next - s.t_arr) as f64 / NS_PER_SEC as f64;
            let limit = s.edge.min(s.total) as f64;
            if s.arrived < limit {
                s.arrived = (s.arrived + s.path_bw * dt).min(limit);
            }
            s.t_arr = next;
            while let Some(&(t, e)) = s.updates.front() {
                if t > s.t_arr {
                    break;
                }
                s.edge = s.edge.max(e);
                s.updates.pop_front();
            }
        }
        while let Some(&(t, e)) = s.updates.front() {
            if t > now {
                break;
            }
            s.edge = s.edge.max(e);
            s.updates.pop_front();
        }
        self.tcp_charge_memory(s);
    }

    /// Queued skbs hold kernel memory (sk_rmem_alloc, in pages of truesize).
    fn tcp_charge_memory(&mut self, s: &mut TcpReceiver) {
        let want = (s.queued().div_ceil(s.mss) * s.truesize).div_ceil(crate::mm::PAGE_SIZE);
        while s.pages < want {
            // Socket buffers are GFP_ATOMIC allocations that may dip below the low
            // watermark but not below min; past it the skb would be dropped (not modelled:
            // the page is just not counted).
            if self.mm.nr_free() <= self.mm.wmark.min {
                self.wake_kswapd();
                break;
            }
            if self.alloc_kernel_page(KernelOwner::Other).is_none() {
                break;
            }
            s.pages += 1;
        }
        while s.pages > want {
            self.free_last_kernel_page(KernelOwner::Other);
            s.pages -= 1;
        }
    }

    /// When at least `need` more bytes will have arrived, given what is known now.
    fn tcp_next_data(&self, s: &TcpReceiver, need: u64) -> Ns {
        let per = |bytes: f64| (bytes / s.path_bw * NS_PER_SEC as f64).ceil() as Ns;
        let room = s.edge.min(s.total) as f64 - s.arrived;
        if room >= need as f64 {
            return s.t_arr + per(need as f64).max(1);
        }
        if room > 0.0 {
            // The rest of the window arrives; wake for it even if it is short of `need`.
            return s.t_arr + per(room).max(1);
        }
        match s.updates.iter().find(|&&(_, e)| e > s.edge) {
            Some(&(t, e)) => t + per((e - s.edge).min(need) as f64).max(1),
            None => s.t_arr + s.rtt,
        }
    }

    /// tcp_rcv_space_adjust: once per round trip, if the reader drained more than the
    /// buffer was sized for, grow sk_rcvbuf to hold twice that (towards tcp_rmem[2]).
    fn tcp_rcv_space_adjust(&mut self, s: &mut TcpReceiver) {
        let autotune = self.profile.tcp_rcvbuf_autotune && self.sysctl.tcp_moderate_rcvbuf != 0 && !s.locked;
        if self.now < s.space_time + s.rtt {
            return;
        }
        let copied = s.copied - s.space_seq;
        if autotune && copied > s.space {
            // rcvwin = 2 * copied + 16 * advmss, in buffer bytes (truesize per segment).
            let rcvwin = 2 * copied + 16 * s.mss;
            let rcvbuf = (rcvwin.div_ceil(s.mss) * s.truesize).min(self.sysctl.tcp_rmem[2]);
            if rcvbuf > s.rcvbuf {
                s.rcvbuf = rcvbuf;
                s.max_rcvbuf = s.max_rcvbuf.max(rcvbuf);
            }
            s.space = copied;
        }
        s.space_seq = s.copied;
        s.space_time = self.now;
    }

    /// recv(2) of up to `len` bytes into the reader's buffer. The reader pays, in system
    /// time, the copy of what it takes and the receive processing of those segments (done
    /// in its context through the prequeue); then it sends the window update, which
    /// releases more data one round trip later.
    pub fn tcp_recvmsg(&mut self, s: &mut TcpReceiver, tid: TaskId, len: u64) -> RecvProgress {
        self.tcp_advance(s);
        if s.copied >= s.total {
            self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
            return RecvProgress { bytes: 0, wait_until: None, eof: true };
        }
        let avail = s.queued();
        if avail == 0 || len == 0 {
            let need = s.mss.min(s.total - s.copied);
            let t = self.tcp_next_data(s, need).max(self.now + 1);
            return RecvProgress { bytes: 0, wait_until: Some(t), eof: false };
        }
        let n = avail.min(len);
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        let net = &self.machine.net;
        let segs = n as f64 / s.mss as f64;
        let cost = (n as f64 / self.machine.cpu_model.copy_bw * NS_PER_SEC as f64
            + n as f64 * net.rx_byte_ns
            + segs * net.rx_packet_ns as f64) as Ns;
        self.charge_sys(tid, cost);
        // One receive interrupt per frame (2.4 has no NAPI; later kernels batch them).
        let before = s.segs_charged as u64;
        s.segs_charged += segs / self.profile.rx_frames_per_irq as f64;
        self.intr += s.segs_charged as u64 - before;
        s.copied += n;
        // The window update leaves once this batch is processed.
        let edge = s.arrived as u64 + self.tcp_free_window(s);
        if edge > s.announced {
            s.announced = edge;
            // It leaves when the reader's CPU work queued so far (this batch included) is done.
            let t = self.now + self.tasks[tid as usize].pending_sys + self.tasks[tid as usize].pending_user + s.rtt;
            // A later, larger update supersedes those that would take effect after it.
            while s.updates.back().is_some_and(|&(bt, _)| bt >= t) {
                s.updates.pop_back();
            }
            s.updates.push_back((t, edge));
        }
        self.tcp_rcv_space_adjust(s);
        self.tcp_charge_memory(s);
        RecvProgress { bytes: n, wait_until: None, eof: s.copied >= s.total }
    }

    /// close(2): whatever is still queued is freed with the socket.
    pub fn tcp_close(&mut self, s: &mut TcpReceiver) {
        s.copied = s.arrived as u64;
        s.arrived = s.copied as f64;
        s.total = s.copied;
        self.tcp_charge_memory(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtwin_engine::NS_PER_MS;

    fn kernel(rmem: [u64; 3]) -> (Kernel, TaskId) {
        let mut m = memtwin_machine::preset("seed-002").unwrap();
        m.sysctl.tcp_rmem = rmem;
        let mut k = Kernel::boot(m, 1).unwrap();
        let tid = k.spawn_task("ftp", "ftp", false, None, None);
        (k, tid)
    }

    /// Data nobody reads fills the window and no more; its skbs hold kernel pages until read.
    #[test]
    fn queued_data_holds_kernel_memory() {
        let (mut k, tid) = kernel([4096, 873800, 1747600]);
        let base = k.mm.kernel.count(KernelOwner::Other);
        let mut s = k.tcp_open_receiver(10 << 20, None);
        k.run_until(k.now + 50 * NS_PER_MS, &mut |_| false);
        let p = k.tcp_recvmsg(&mut s, tid, 0);
        assert_eq!(p.bytes, 0);
        let window = TcpReceiver::win_from_space(873800, 2);
        assert!(s.queued() <= window && s.queued() + s.mss > window, "queued {} vs window {window}", s.queued());
        let pages = (s.queued().div_ceil(s.mss) * s.truesize).div_ceil(4096);
        assert_eq!(k.mm.kernel.count(KernelOwner::Other) - base, pages);
        assert!(pages > 200, "a 640 KB window of 1448-byte segments in 2 KB buffers: {pages} pages");
        while s.queued() > 0 {
            k.tcp_recvmsg(&mut s, tid, 1 << 20);
        }
        assert_eq!(k.mm.kernel.count(KernelOwner::Other), base, "read data frees its buffers");
        k.run_until(k.now + 50 * NS_PER_MS, &mut |_| false);
        k.tcp_recvmsg(&mut s, tid, 0);
        assert!(k.mm.kernel.count(KernelOwner::Other) > base);
        k.tcp_close(&mut s);
        assert_eq!(k.mm.kernel.count(KernelOwner::Other), base, "close frees what is queued");
        k.mm.check_invariants().unwrap();
    }

    /// SO_RCVBUF: doubled, capped at rmem_max, and never autotuned.
    #[test]
    fn so_rcvbuf_is_capped_and_locked() {
        let (mut k, _) = kernel([4096, 87380, 174760]);
        let s = k.tcp_open_receiver(1 << 20, Some(1 << 20));
        assert_eq!(s.rcvbuf, 2 * 65535, "2.4's rmem_max of 65535, doubled");
        assert!(s.locked);
        let s = k.tcp_open_receiver(1 << 20, None);
        assert_eq!((s.rcvbuf, s.locked), (87380, false));
    }

    #[test]
    fn window_from_space() {
        // 2.4's default buffer gives exactly the unscaled maximum with adv_win_scale = 2.
        assert_eq!(TcpReceiver::win_from_space(87380, 2), 65535);
        assert_eq!(TcpReceiver::win_from_space(873800, 2), 655350);
        assert_eq!(TcpReceiver::win_from_space(131072, 1), 65536);
        assert_eq!(TcpReceiver::win_from_space(131072, -1), 65536);
    }
}
