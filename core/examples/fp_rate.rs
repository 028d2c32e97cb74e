//! Measures the false-positive rate of this library's filters for 1..=20 bits per
//! key, prints it beside the theoretical rate as a Markdown table, and draws both,
//! with LevelDB's own test bounds, as an SVG chart.
//!
//! `make plot` runs it: `cargo run --release --example fp_rate -- docs/false-positive-rate.svg`.

use std::error::Error;

use leveldb_bloom::{BloomFilterPolicy, Filter};
use plotters::prelude::*;

const NUM_KEYS: u32 = 10_000;
const NUM_ABSENT: u32 = 1_000_000;
/// Absent keys start here, as in LevelDB's util/bloom_test.cc.
const FIRST_ABSENT: u32 = 1_000_000_000;
const BITS_PER_KEY: std::ops::RangeInclusive<u32> = 1..=20;

/// LevelDB's bloom_test.cc fails a filter of 10 bits per key above 2% false positives
/// and calls it mediocre above 1.25%.
const LEVELDB_LIMIT: f64 = 0.02;
const LEVELDB_MEDIOCRE: f64 = 0.0125;

/// LevelDB's test keys: the key's number as 4 little-endian bytes.
fn key(i: u32) -> [u8; 4] {
    i.to_le_bytes()
}

struct Point {
    bits_per_key: u32,
    num_probes: u8,
    filter_bytes: usize,
    measured: f64,
    theoretical: f64,
}

fn measure(bits_per_key: u32) -> Point {
    let policy = BloomFilterPolicy::new(bits_per_key);
    let keys: Vec<[u8; 4]> = (0..NUM_KEYS).map(key).collect();
    let bytes = policy.build_filter(&keys);
    let filter = Filter::new(&bytes);
    assert!(keys.iter().all(|k| filter.may_contain(k)), "a key was lost");
    let false_positives = (FIRST_ABSENT..FIRST_ABSENT + NUM_ABSENT)
        .filter(|&i| filter.may_contain(key(i)))
        .count();
    // b bits per key, each key setting k bits: a bit stays 0 with probability
    // e^(-k/b), and an absent key finds all its k bits set with (1 - e^(-k/b))^k.
    // (10,000 keys fill whole bytes, so b is exact here.)
    let (k, b) = (f64::from(policy.num_probes()), f64::from(bits_per_key));
    Point {
        bits_per_key,
        num_probes: policy.num_probes(),
        filter_bytes: bytes.len(),
        measured: false_positives as f64 / f64::from(NUM_ABSENT),
        theoretical: (1.0 - (-k / b).exp()).powf(k),
    }
}

/// `n` with a comma between groups of three digits.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn print_table(points: &[Point]) {
    println!("| bits/key | k | filter bytes | measured | theory |");
    println!("|---:|---:|---:|---:|---:|");
    for p in points {
        println!(
            "| {} | {} | {} | {:.4}% | {:.4}% |",
            p.bits_per_key,
            p.num_probes,
            p.filter_bytes,
            p.measured * 100.0,
            p.theoretical * 100.0
        );
    }
}

fn draw(points: &[Point], path: &str) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let (x_min, x_max) = (*BITS_PER_KEY.start(), *BITS_PER_KEY.end());
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "leveldb-bloom: false positives of a filter of {} keys ({} absent keys asked)",
                thousands(NUM_KEYS),
                thousands(NUM_ABSENT)
            ),
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x_min..x_max, (1e-5f64..1.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("bits per key")
        .y_desc("false-positive rate")
        .x_labels(20)
        .y_label_formatter(&|y| format!("{}%", y * 100.0))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;

    let horizontal = |y: f64| [(x_min, y), (x_max, y)];
    for (y, color, label) in [
        (
            LEVELDB_LIMIT,
            RED,
            "LevelDB's test limit at 10 bits/key: 2%",
        ),
        (
            LEVELDB_MEDIOCRE,
            RGBColor(230, 140, 0),
            "LevelDB's test: \"mediocre\" above 1.25%",
        ),
    ] {
        chart
            .draw_series(DashedLineSeries::new(
                horizontal(y),
                8,
                6,
                color.stroke_width(2),
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], color.stroke_width(2)));
    }

    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.bits_per_key, p.theoretical)),
            BLACK.stroke_width(2),
        ))?
        .label("theory: (1 − e^(−k/b))^k, k = max(1, ⌊0.69·b⌋)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 24, y)], BLACK.stroke_width(2)));

    // LevelDB's advice is 10 bits per key: mark it, with the rate measured there.
    let advice = points
        .iter()
        .find(|p| p.bits_per_key == 10)
        .expect("in range");
    chart.draw_series(DashedLineSeries::new(
        [(10, 1e-5), (10, 1.0)],
        3,
        5,
        RGBColor(120, 120, 120).stroke_width(1),
    ))?;
    chart.draw_series([EmptyElement::at((10, advice.measured))
        + Text::new(
            format!("{:.2}% at 10 bits/key", advice.measured * 100.0),
            (-165, 16),
            ("sans-serif", 16).into_font(),
        )])?;

    let measured = points.iter().map(|p| (p.bits_per_key, p.measured));
    chart.draw_series(LineSeries::new(measured.clone(), BLUE.stroke_width(2)))?;
    chart
        .draw_series(measured.map(|xy| Circle::new(xy, 5, BLUE.filled())))?
        .label("measured: this library's filters")
        .legend(|(x, y)| Circle::new((x + 12, y), 5, BLUE.filled()));

    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/false-positive-rate.svg".into());
    let points: Vec<Point> = BITS_PER_KEY.map(measure).collect();
    print_table(&points);
    draw(&points, &path)?;
    eprintln!("wrote {path}");
    Ok(())
}
