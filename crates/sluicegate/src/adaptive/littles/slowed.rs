//! A service that slowed, read off the buckets before a probe measures it: the whole RT
//! distribution stretched, its low end with it (`latency_spike`, the service 3× slower).

use super::{Bucket, LittlesLaw, RT_BUCKETS, STARTUP_SIGNIFICANCE};
use std::time::Duration;

/// The probe's readings a stretch re-based ([`LittlesLaw::follow_slowdown`]): the floor, the
/// median and min RT as the last probe left them, and the scale applied to them so far.
pub(super) type Slowed = (Option<Duration>, Option<Duration>, Option<Duration>, f64);

impl LittlesLaw {
    /// The service slowed since the window's older buckets (those before the last
    /// [`RT_BUCKETS`], outside probes): the scale their median RT rose by, where
    /// - the last buckets' mean median stands `probe_trigger` × the older buckets' (the median
    ///   of their medians) or more, by three of its standard errors;
    /// - the low end rose with it as a service that slows does: the last buckets' mean low RT
    ///   no more than the older buckets' × that scale, within three of its standard errors (a
    ///   queue or a delay outside adds its wait to every request: 46 ms over 3 ms at the onset
    ///   of `network_delay_spike`, whose median rose 2.8×);
    /// - and far less than the median did in time, by three standard errors of the median (in
    ///   front of a near-fixed service a wait lifts both alike, and a stretch is too small to
    ///   tell from it).
    ///
    /// Only in a settled regime (the knee found, a probe's floor, no restart under way) and
    /// where none of the last buckets is a probe's.
    fn service_slowed(&self) -> Option<f64> {
        if !self.probed || !self.knee_found || self.restarted || self.delay_restart.is_some() {
            return None;
        }
        let recent: Vec<&Bucket> = self.closed.iter().rev().take(RT_BUCKETS).collect();
        if recent.len() < RT_BUCKETS || recent.iter().any(|b| b.probed) {
            return None;
        }
        let mids: Vec<(f64, f64)> = (recent.iter())
            .filter_map(|b| b.mid_rt().zip(b.mid_se()))
            .map(|(mid, se)| (secs(mid), secs(se)))
            .collect();
        let (low, _) = self.recent_low()?;
        let low_se = secs(self.bucket_low_se()?);
        // Against the regime a blind probe started in, where lower: once it ended, the
        // window's older buckets may be of the new regime too. Then the low end must also
        // stay under that regime's median: a slower service stretches it by the scale (a
        // 3× slower one: 7.7 ms against 35), a queue that left the probe blind lifts it by
        // its wait (`capacity_fifth`: 260 ms for a fifth of the workers, against 38 ms).
        let (mid0, low0, kept) = match (self.older_regime(), self.slow_ref) {
            (Some(now), Some(kept)) if kept.0 < now.0 => (kept.0, kept.1, true),
            (now, kept) => {
                let (m, l) = now.or(kept)?;
                (m, l, now.is_none())
            }
        };
        if mids.len() < RT_BUCKETS {
            return None;
        }
        let n = RT_BUCKETS as f64;
        let mid = mids.iter().map(|m| m.0).sum::<f64>() / n;
        let mid_se = mids.iter().map(|m| m.1 * m.1).sum::<f64>().sqrt() / n;
        let (low, low_se) = (secs(low), low_se / n.sqrt());
        let scale = mid / mid0.max(f64::MIN_POSITIVE);
        let risen = mid - STARTUP_SIGNIFICANCE * mid_se > self.c.probe_trigger * mid0;
        let stretched =
            low <= scale * low0 + STARTUP_SIGNIFICANCE * low_se && (!kept || low < mid0);
        let not_shifted = (mid - mid0) - (low - low0) > STARTUP_SIGNIFICANCE * mid_se;
        (risen && stretched && not_shifted).then_some(scale)
    }

    /// The median of the window's older buckets' medians and low RTs (those before the last
    /// [`RT_BUCKETS`], outside probes), where there are as many of each.
    pub(super) fn older_regime(&self) -> Option<(f64, f64)> {
        let older = self
            .closed
            .iter()
            .rev()
            .skip(RT_BUCKETS)
            .filter(|b| !b.probed);
        let mut old_mids: Vec<f64> = older.clone().filter_map(Bucket::mid_rt).map(secs).collect();
        let mut old_lows: Vec<f64> = older.filter_map(Bucket::low_rt).map(secs).collect();
        if old_mids.len() < RT_BUCKETS || old_lows.len() < RT_BUCKETS {
            return None;
        }
        Some((median(&mut old_mids), median(&mut old_lows)))
    }

    /// Where the service slowed ([`Self::service_slowed`]), the last probe's floor, median and
    /// min RT are taken × the scale (the most seen since that probe), as a slower service
    /// multiplies every RT; the probe that follows measures them. Read against the old floor,
    /// a 3× slower service's low RT (7.7 ms for 2.6) was a queue of two that walked the limit
    /// from 50 to 41–45 for 50 workers until a probe re-based it, 2–7 s later (the first probe
    /// after the change blind, the next shallow). Whether the estimate is to be read again.
    pub(super) fn follow_slowdown(&mut self) -> bool {
        if self.probe.is_some() || self.since_probe < RT_BUCKETS {
            return false;
        }
        let Some(scale) = self.service_slowed() else {
            return false;
        };
        let (floor, mid, min_rt, applied) =
            *self
                .slowed
                .get_or_insert((self.low_floor, self.probe_mid, self.min_rt, 1.0));
        let scale = scale.max(applied);
        self.slowed = Some((floor, mid, min_rt, scale));
        self.low_floor = floor.map(|f| f.mul_f64(scale));
        self.probe_mid = mid.map(|m| m.mul_f64(scale));
        self.min_rt = min_rt.map(|m| m.mul_f64(scale));
        // As after a probe: the window still holds the buckets from before.
        self.since_probe = 0;
        true
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    v[v.len() / 2]
}
