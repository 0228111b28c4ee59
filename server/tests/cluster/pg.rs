//! A PostgreSQL server of a test's own, made with the machine's PostgreSQL programs (`initdb`,
//! `pg_ctl`) in a temporary directory on a free loopback port, so that a test may restart it.
//!
//! The programs are looked for in `COFFER_PG_BINDIR`, then in `/usr/lib/postgresql/<version>/bin`
//! (Debian's place), then on `PATH`. PostgreSQL refuses to run as root: as root the server runs as the
//! `postgres` user, through `runuser`. Anything missing fails the test, with what to install.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A running private PostgreSQL server, stopped when dropped.
pub struct Private {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

fn bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("COFFER_PG_BINDIR") {
        return PathBuf::from(dir);
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(newest) = versions.pop() {
        return newest;
    }
    let on_path = Command::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    match on_path {
        Some(initdb) => Path::new(&initdb).parent().unwrap().to_path_buf(),
        None => panic!(
            "the cluster tests restart a PostgreSQL server of their own and need its programs \
             (initdb, pg_ctl): install the distribution's postgresql package or set COFFER_PG_BINDIR"
        ),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Private {
    /// Makes and starts one.
    pub fn start() -> Private {
        let bin = bin_dir();
        let as_postgres = is_root();
        let dir = tempfile::tempdir().expect("a temporary directory");
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "cannot give the directory to postgres");
        }
        let server = Private {
            dir,
            bin,
            port: free_port(),
            as_postgres,
        };
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        server.pg_ctl_start();
        server
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `program` of the PostgreSQL programs, run as `postgres` when this process is root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        };
        command.current_dir(self.dir.path());
        command
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let mut command = self.command(program);
        let output = command
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        assert!(
            output.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    fn pg_ctl_start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-o",
                &options,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
    }

    fn pg_ctl_stop(&self, mode: &str) {
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                mode,
                "-w",
                "stop",
            ],
        );
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops it as a crash would (`immediate`: no checkpoint, every connection cut), waits `down`, and
    /// starts it again (crash recovery replays its WAL).
    pub fn restart(&mut self, down: Duration) {
        self.pg_ctl_stop("immediate");
        std::thread::sleep(down);
        self.pg_ctl_start();
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(data)
            .args(["-m", "immediate", "stop"])
            .output();
    }
}
