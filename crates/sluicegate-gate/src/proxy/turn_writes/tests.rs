use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// A connected pair: the gate's side as `TurnWrites`, and the client's socket.
async fn pair() -> (TurnWrites, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (accepted, _) = listener.accept().await.unwrap();
    let dup: std::net::TcpStream = socket2::SockRef::from(&accepted)
        .try_clone()
        .unwrap()
        .into();
    (TurnWrites::new(accepted, Arc::new(dup)), client)
}

/// Whether the client has any byte to read now: asked of the socket (a non-blocking peek),
/// not of the reactor. Loopback TCP delivers within the sender's `send`, so a byte sent is
/// a byte here.
fn has_bytes(client: &TcpStream) -> bool {
    let mut byte = [std::mem::MaybeUninit::<u8>::uninit(); 1];
    match socket2::SockRef::from(client).peek(&mut byte) {
        Ok(n) => n > 0,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
        Err(e) => panic!("{e}"),
    }
}

async fn read_exactly(client: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut got = vec![0u8; n];
    tokio::time::timeout(Duration::from_secs(10), client.read_exact(&mut got))
        .await
        .expect("the bytes arrive")
        .unwrap();
    got
}

/// Two answers written in one turn are not sent while the turn runs; both are on their
/// sockets once the tasks ready then have run (the flusher runs after them).
#[tokio::test]
async fn answers_written_in_one_turn_leave_together_after_it() {
    let (mut a, mut client_a) = pair().await;
    let (mut b, mut client_b) = pair().await;
    a.write_all(b"answer a").await.unwrap();
    a.flush().await.unwrap();
    b.write_all(b"answer b").await.unwrap();
    b.flush().await.unwrap();
    // Flushed as far as hyper can tell, and still with the flusher.
    assert!(!has_bytes(&client_a) && !has_bytes(&client_b));
    tokio::task::yield_now().await;
    assert_eq!(read_exactly(&mut client_a, 8).await, b"answer a");
    assert_eq!(read_exactly(&mut client_b, 8).await, b"answer b");
}

/// Whatever the sizes (held, too large to hold, stuck because the client reads slowly),
/// the client gets every byte in order, the stuck ones sent while the connection waits to
/// read.
#[tokio::test]
async fn every_byte_arrives_in_order_with_a_slow_reader() {
    for seed in 0..8u64 {
        let (mut gate, mut client) = pair().await;
        // Small socket buffers, so that the flusher meets a full socket.
        socket2::SockRef::from(&client)
            .set_recv_buffer_size(32 * 1024)
            .unwrap();
        socket2::SockRef::from(&gate.socket)
            .set_send_buffer_size(32 * 1024)
            .unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut sent = Vec::new();
        for _ in 0..60 {
            let len = match rng.random_range(0..10) {
                0 => rng.random_range(LIMIT..3 * LIMIT),
                1..=3 => rng.random_range(1000..LIMIT),
                _ => rng.random_range(1..300),
            };
            sent.extend((0..len).map(|_| rng.random::<u8>()));
        }
        let total = sent.len();
        let reader = tokio::spawn(async move {
            let mut got = Vec::with_capacity(total);
            let mut chunk = [0u8; 700];
            while got.len() < total {
                let n = client.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the connection ended early");
                got.extend_from_slice(&chunk[..n]);
                tokio::task::yield_now().await;
            }
            got
        });
        let mut at = 0;
        let mut rng = StdRng::seed_from_u64(seed + 100);
        while at < total {
            let len = rng.random_range(1..2 * LIMIT).min(total - at);
            gate.write_all(&sent[at..at + len]).await.unwrap();
            if rng.random_bool(0.5) {
                gate.flush().await.unwrap();
            }
            if rng.random_bool(0.3) {
                tokio::task::yield_now().await;
            }
            at += len;
        }
        gate.flush().await.unwrap();
        // As hyper does once its answer is out: wait for the client's next bytes, which
        // is what sends those the flusher could not.
        let mut next = [0u8; 1];
        let got = tokio::time::timeout(Duration::from_secs(20), async {
            tokio::select! {
                // The reader first: once done, it drops its socket, which ends the read.
                biased;
                got = reader => got.unwrap(),
                r = gate.read(&mut next) => panic!("the client sent nothing: {r:?}"),
            }
        })
        .await
        .expect("the reader gets everything");
        assert!(got == sent, "seed {seed}: the bytes differ");
    }
}

/// hyper drops a connection after its last answer without waiting: the answer still
/// arrives, and then the end of the connection.
#[tokio::test]
async fn a_connection_dropped_with_its_answer_queued_delivers_it_then_closes() {
    let (mut gate, mut client) = pair().await;
    gate.write_all(b"last answer").await.unwrap();
    gate.flush().await.unwrap();
    drop(gate);
    assert_eq!(read_exactly(&mut client, 11).await, b"last answer");
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut rest))
        .await
        .expect("the connection closes")
        .unwrap();
    assert!(rest.is_empty());
}

/// A shutdown sends what is held first: the close never overtakes the answer.
#[tokio::test]
async fn a_shutdown_sends_the_held_answer_before_the_end() {
    let (mut gate, mut client) = pair().await;
    gate.write_all(b"answer").await.unwrap();
    gate.shutdown().await.unwrap();
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut all))
        .await
        .expect("the connection ends")
        .unwrap();
    assert_eq!(all, b"answer");
}

/// The thread's flusher ends with its runtime; the next runtime on the same thread starts
/// its own (an answer would otherwise wait forever on a flusher nobody runs).
#[test]
fn a_new_runtime_on_the_same_thread_gets_a_flusher_of_its_own() {
    for round in 0..3 {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (mut gate, mut client) = pair().await;
            gate.write_all(b"hello").await.unwrap();
            gate.flush().await.unwrap();
            assert_eq!(
                read_exactly(&mut client, 5).await,
                b"hello",
                "round {round}"
            );
        });
    }
}
