//! Unit tests of the member's shared state (`super`).

use super::*;

fn replica() -> Replica {
    Replica::new(
        ReplicaOptions {
            group: "news".into(),
            name: "a".into(),
            lease: Duration::from_secs(2),
            advertise: None,
            secret: crate::config::GroupSecret::new(b"0123456789abcdef".to_vec()),
            write_wait: Duration::from_secs(60),
        },
        "http://127.0.0.1:1".into(),
    )
}

#[test]
fn appended_effects_wait_and_are_numbered() {
    let replica = replica();
    assert_eq!(replica.append(&[]), 0);
    let effects = vec![Effect::KeysSwept, Effect::KeysSwept];
    assert_eq!(replica.append(&effects), 2);
    assert_eq!(replica.append(&effects[..1]), 3);
    let (first, last, frames) = replica.take_pending(1 << 20).unwrap();
    assert_eq!((first, last), (1, 3));
    assert!(!frames.is_empty());
    assert!(replica.take_pending(1 << 20).is_none());
    assert_eq!(replica.append(&effects[..1]), 4);
    assert_eq!(replica.take_pending(1 << 20).unwrap().0, 4);
    // A large commit goes out in several records of whole frames.
    assert_eq!(replica.append(&vec![Effect::KeysSwept; 10]), 14);
    let mut next = 5;
    while let Some((first, last, frames)) = replica.take_pending(30) {
        assert_eq!(first, next);
        assert!(last >= first);
        assert!(frames.len() <= 30 || last == first);
        next = last + 1;
    }
    assert_eq!(next, 15);
}

#[test]
fn a_standby_applies_only_what_follows() {
    let replica = replica();
    assert!(replica.applied(2, 5).is_err());
    replica.applied(1, 5).unwrap();
    replica.applied(6, 5).unwrap(); // an epoch record: empty range
    assert_eq!(replica.last_seq(), 5);
}

#[test]
fn only_a_leader_within_its_lease_takes_writes() {
    let replica = replica();
    assert!(matches!(replica.gate(), Err(ReplicaError::NoLeader { .. })));
    replica.set_role(
        Role::Standby,
        2,
        Some(Leader {
            node: "b-1".into(),
            url: "http://b".into(),
        }),
    );
    assert!(matches!(
        replica.gate(),
        Err(ReplicaError::NotLeader { .. })
    ));
    replica.set_role(Role::Leader, 3, None);
    assert!(!replica.may_act(), "no lease yet");
    replica.lease_held_from(boottime());
    assert!(replica.gate().is_ok());
    assert!(replica.may_act());
    replica.step_down("test");
    assert!(replica.gate().is_err());
    assert!(!replica.may_act());
    replica.set_role(Role::Leader, 4, None);
    assert_eq!(replica.role(), Role::Deposed, "deposed is final");
}

#[tokio::test]
async fn waiters_are_released_by_a_record_or_a_step_down() {
    let replica = std::sync::Arc::new(replica());
    replica.set_role(Role::Leader, 1, None);
    replica.lease_held_from(boottime());
    let seq = replica.append(&[Effect::KeysSwept]);
    let waiting = {
        let replica = replica.clone();
        tokio::spawn(async move { replica.confirmed(seq, Duration::from_secs(5)).await })
    };
    replica.confirm(
        seq,
        Head {
            record: 1,
            last_seq: seq,
            ..Head::default()
        },
    );
    assert_eq!(waiting.await.unwrap(), Ok(()));
    let seq = replica.append(&[Effect::KeysSwept]);
    let waiting = {
        let replica = replica.clone();
        tokio::spawn(async move { replica.confirmed(seq, Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    replica.step_down("test");
    assert!(waiting.await.unwrap().is_err());
    // A lapsed lease is waited for, and a renewal releases the waiter.
    let lapsed = Replica::new(replica.options.clone(), "http://b".into());
    lapsed.set_role(Role::Leader, 1, None);
    lapsed.lease_held_from(boottime().saturating_sub(Duration::from_secs(10)));
    assert!(!lapsed.may_act());
    let lapsed = std::sync::Arc::new(lapsed);
    let waiting = {
        let lapsed = lapsed.clone();
        tokio::spawn(async move { lapsed.confirmed(0, Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    lapsed.lease_held_from(boottime());
    assert_eq!(waiting.await.unwrap(), Ok(()));
    assert!(
        replica
            .confirmed(seq + 5, Duration::from_millis(10))
            .await
            .is_err()
    );
}
