//! The server under load: starting and stopping it, and reading its memory, CPU time and the load average.

use super::*;

/// A server started by the load generator.
pub(super) struct Server {
    pub(super) child: Child,
    pub(super) pid: u32,
    pub(super) addr: String,
    pub(super) store: PathBuf,
}

/// The server program, `coffer-server`, beside this one (the workspace's build puts them together).
fn server_program() -> Result<PathBuf, String> {
    coffer_cli::program_beside("coffer-server").map_err(|why| {
        format!(
            "the load generator starts a server: {why} (or pass --url to measure a running server)"
        )
    })
}

impl Server {
    pub(super) fn start(global: &Global) -> Result<Self, String> {
        let exe = server_program()?;
        if coffer_cli::plugin_dirs(global).is_empty() {
            return Err(
                "no plugin directory: pass --plugin-dir target/release (or set COFFER_PLUGIN_PATH)"
                    .into(),
            );
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let store =
            std::env::temp_dir().join(format!("coffer-loadtest-{}-{nanos}.db", std::process::id()));
        let mut command = Command::new(exe);
        // The environment's COFFER_PLUGIN_PATH reaches the child by itself.
        for dir in &global.plugin_dirs {
            command.arg("--plugin-dir").arg(dir);
        }
        if let Some(lock) = &global.lock {
            command.arg("--lock").arg(lock);
        }
        if let Some(deadline) = global.plugin_deadline {
            command
                .arg("--plugin-deadline")
                .arg(deadline.as_secs_f64().to_string());
        }
        command
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--create", "--store"])
            .arg(&store)
            .args([
                "--actions-per-second",
                "1000000000",
                "--action-burst",
                "1000000000",
                "--max-connections",
                "100000",
                // Every spectator's WebSocket opens as a read from this one address.
                "--reads-per-second",
                "1000000000",
                "--read-burst",
                "1000000000",
                "--max-games",
                "10000000",
                // Every game of the load (and every idle game of the memory figure) comes from this one
                // address: the default quota of 1,000 unfinished games per client would refuse them.
                "--max-games-per-client",
                "10000000",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if std::env::var_os("COFFER_LOG").is_none() {
            command.env("COFFER_LOG", "warn");
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let pid = child.id();
        let stdout = child
            .stdout
            .take()
            .ok_or("the server's output is not piped")?;
        let (first, lines) = std::sync::mpsc::channel();
        // Reads the first line, then drains the rest so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = first.send(line);
            let mut sink = std::io::sink();
            let _ = std::io::copy(&mut reader, &mut sink);
        });
        let line = match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the server did not say where it listens within 120 s".into());
            }
        };
        let Some(addr) = listening_addr(&line) else {
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            return Err(format!(
                "the server did not start ({status}); its first line: {:?}",
                line.trim()
            ));
        };
        Ok(Self {
            child,
            pid,
            addr,
            store,
        })
    }

    /// SIGTERM, a wait for the graceful stop, and the store's files removed.
    pub(super) fn stop(&mut self) -> Result<(), String> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        let result = loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => break Ok(()),
                Ok(Some(status)) => break Err(format!("the server stopped with {status}")),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break Err("the server did not stop within 30 s of SIGTERM: killed".into());
                }
                Err(e) => break Err(format!("cannot wait for the server: {e}")),
            }
        };
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.store.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
        result
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.stop();
        }
    }
}

/// The address in the server's first line: `coffer serve: listening on http://ADDR with ...`.
pub(super) fn listening_addr(line: &str) -> Option<String> {
    let rest = &line[line.find("listening on http://")? + "listening on http://".len()..];
    let addr = rest
        .split_whitespace()
        .next()?
        .trim_end_matches(['/', ';', ',']);
    (!addr.is_empty()).then(|| addr.to_owned())
}

/// VmRSS of a process, in bytes.
pub(super) fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    vm_rss(&status)
}

pub(super) fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut words = line["VmRSS:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => Some(value * 1024),
        Some(_) => None,
    }
}

/// User and system CPU time of a process so far, in seconds (clock ticks of 1/100 s).
pub(super) fn cpu_seconds(pid: u32) -> Option<f64> {
    stat_cpu_seconds(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

pub(super) fn stat_cpu_seconds(stat: &str) -> Option<f64> {
    // The fields after the command name in parentheses start at field 3; utime and stime are 14 and 15.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

pub(super) fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<f64>().ok());
    Some([parts.next()??, parts.next()??, parts.next()??])
}

// ----- measuring -----
