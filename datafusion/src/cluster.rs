//! A Ballista scheduler and executors that know our functions.
//!
//! Ballista ships scalar functions in its plans by name: the scheduler
//! (which plans, and may fold constant calls) and every executor (which
//! runs the tasks) resolve `yaql` and `murano_validate` in their own
//! function registry. So both are built here with our functions
//! registered, each over the catalogue artifact it was started with
//! ([`crate::artifact`]); stock Ballista processes would refuse the plans
//! ("LogicalExtensionCodec is not provided for scalar function ...").

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::utils::default_session_builder;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use ballista_scheduler::SessionBuilder;
use datafusion::prelude::SessionConfig;

use crate::Catalog;

/// Runs a scheduler on `addr` until the process ends.
pub async fn run_scheduler(addr: SocketAddr, catalog: Option<Catalog>) -> Result<(), String> {
    let builder: SessionBuilder = Arc::new(move |cfg: SessionConfig| {
        let mut state = default_session_builder(cfg)?;
        crate::register_state(&mut state, catalog.clone())?;
        Ok(state)
    });
    let config = SchedulerConfig {
        bind_host: addr.ip().to_string(),
        external_host: addr.ip().to_string(),
        bind_port: addr.port(),
        override_session_builder: Some(builder),
        ..Default::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| e.to_string())?;
    start_server(cluster, addr, Arc::new(config))
        .await
        .map_err(|e| e.to_string())
}

/// Where an executor listens and which scheduler it joins.
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    /// The host to bind and to advertise (clients fetch results from it).
    pub host: String,
    /// The Arrow Flight port (shuffle data and results).
    pub port: u16,
    /// The port the scheduler pushes tasks to.
    pub grpc_port: u16,
    /// The scheduler.
    pub scheduler: SocketAddr,
    /// Tasks run at once (0: one per core).
    pub tasks: usize,
    /// Shuffle files go here.
    pub work_dir: PathBuf,
}

/// Runs an executor until it is stopped (SIGTERM, Ctrl-C).
pub async fn run_executor(o: ExecutorOptions, catalog: Option<Catalog>) -> Result<(), String> {
    let mut state =
        default_session_builder(SessionConfig::new_with_ballista()).map_err(|e| e.to_string())?;
    crate::register_state(&mut state, catalog).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&o.work_dir).map_err(|e| format!("{}: {e}", o.work_dir.display()))?;
    let config = ExecutorProcessConfig {
        bind_host: o.host.clone(),
        external_host: Some(o.host),
        port: o.port,
        grpc_port: o.grpc_port,
        scheduler_host: o.scheduler.ip().to_string(),
        scheduler_port: o.scheduler.port(),
        scheduler_connect_timeout_seconds: 30,
        vcores: o.tasks,
        work_dir: Some(o.work_dir.to_string_lossy().into_owned()),
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        ..Default::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| e.to_string())
}
