//! The accept loop: HTTP/1.1 connections served by hyper with a bounded
//! count, an idle timeout, and graceful shutdown on SIGINT/SIGTERM.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::{api, reply, Options};

/// Serves connections until a stop signal, then waits (up to the request
/// timeout) for the requests in flight.
pub async fn accept(listener: TcpListener, app: Router, options: &Options) {
    let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop_signal());
    loop {
        let stream = tokio::select! {
            r = listener.accept() => r,
            _ = &mut stop => break,
        };
        let stream = match stream {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of file descriptors and the like: wait, do not spin.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        let conn = builder(options.idle_timeout).serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    tracing::info!("stopping: waiting for the requests in flight");
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(options.timeout + Duration::from_secs(1)) => {}
    }
}

/// HTTP/1.1 with keep-alive; a connection that does not send a complete
/// request head within `idle` is closed.
fn builder(idle: Duration) -> http1::Builder {
    let mut b = http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(idle)
        .keep_alive(true);
    b
}

/// Answers one request on a connection past the limit with 503 and closes.
async fn refuse(stream: TcpStream) {
    let service = hyper::service::service_fn(|_: hyper::Request<Incoming>| async {
        let msg = "too many connections; try again";
        Ok::<_, Infallible>(reply(api::error(503, "ServiceUnavailable", msg)))
    });
    let conn = builder(Duration::from_secs(2))
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service);
    let _ = tokio::time::timeout(Duration::from_secs(3), conn).await;
}

async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
