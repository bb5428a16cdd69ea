use super::*;
use proptest::prelude::*;

fn coded(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    encode(text, &mut out);
    out
}

#[test]
fn the_table_is_a_complete_prefix_code() {
    // Kraft's sum of a complete code is one: every string of bits begins
    // with exactly one code, so the last byte's fill is never a code.
    let kraft: f64 = (1..=MAX_BITS as usize)
        .map(|length| f64::from(table::SYMBOLS_OF_LENGTH[length]) / f64::from(1u32 << length))
        .sum();
    assert_eq!(kraft, 1.0);
    assert_eq!(table::SYMBOLS_OF_LENGTH[0], 0);
    let symbols = table::SYMBOLS.chars().count();
    let counted: u16 = table::SYMBOLS_OF_LENGTH.iter().sum();
    assert_eq!(symbols, usize::from(counted));
    // Every symbol once, both escapes among them; the longest code is
    // more than seven bits, so a last byte's fill is no code.
    let mut seen: Vec<char> = table::SYMBOLS.chars().collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), symbols);
    assert!(seen.contains(&HAN_ESCAPE) && seen.contains(&ANY_ESCAPE));
    assert!(table::SYMBOLS_OF_LENGTH[8..].iter().any(|&n| n > 0));
}

#[test]
fn common_letters_take_about_a_byte_and_rare_ones_come_back() {
    let text = "国家统计局今天发布数据显示\u{1e}gdp,5|percent2024";
    let out = coded(text);
    assert_eq!(out.len(), encoded_len(text));
    assert!(
        out.len() * 10 < text.chars().count() * 12,
        "{} bytes",
        out.len()
    );
    assert_eq!(decode(&out).as_deref(), Ok(text));
    // A Han character outside the table, one outside the Han block, kana,
    // a capital, an emoji, the block's edges.
    for text in [
        "龘",
        "㐀",
        "かな",
        "A",
        "😀",
        "\u{4e00}\u{9fff}",
        "\u{9fa5}a",
        "",
    ] {
        let out = coded(text);
        assert_eq!(out.len(), encoded_len(text), "{text}");
        assert_eq!(decode(&out).as_deref(), Ok(text), "{text}");
    }
}

#[test]
fn every_symbol_comes_back_at_its_length() {
    for (index, c) in table::SYMBOLS.chars().enumerate() {
        let text = c.to_string();
        let out = coded(&text);
        assert_eq!(decode(&out).as_deref(), Ok(text.as_str()), "symbol {index}");
        assert_eq!(out.len(), encoded_len(&text), "symbol {index}");
    }
}

/// The bytes `write` puts through a bit writer, the last byte filled.
fn written(write: impl FnOnce(&mut BitWriter<'_>)) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = BitWriter {
        out: &mut out,
        pending: 0,
        pending_bits: 0,
    };
    write(&mut writer);
    writer.finish();
    out
}

#[test]
fn damage_is_an_error() {
    // An escape cut short; a Han offset past the block; a surrogate's
    // code point.
    let cut = written(|writer| writer.put_packed(CODE.han_escape));
    assert_eq!(decode(&cut), Err("text cut short"));
    let past = written(|writer| {
        writer.put_packed(CODE.han_escape);
        writer.put((1 << HAN_OFFSET_BITS) - 1, HAN_OFFSET_BITS);
    });
    assert_eq!(decode(&past), Err("text is not Unicode"));
    let surrogate = written(|writer| {
        writer.put_packed(CODE.any_escape);
        writer.put(0xD800, CODE_POINT_BITS);
    });
    assert_eq!(decode(&surrogate), Err("text is not Unicode"));
}

proptest! {
    #[test]
    fn letters_come_back(text in "[a-zA-Z0-9\u{4e00}-\u{9fff}\u{1e} ,|#…]{0,60}") {
        let out = coded(&text);
        prop_assert_eq!(out.len(), encoded_len(&text));
        prop_assert_eq!(decode(&out), Ok(text));
    }
}
