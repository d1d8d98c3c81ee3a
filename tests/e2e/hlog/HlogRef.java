// The Java side of knee's hlog interoperability tests, written against the reference
// HdrHistogram library (Debian libhdrhistogram-java).
//   java HlogRef write OUT SEED     write OUT (an interval log with several tags and shapes of
//                                   seeded random values) and, per tag, the reference's own
//                                   answers: OUT.<tag>.hgrm (outputPercentileDistribution,
//                                   5 ticks, ratio 1e6) and OUT.<tag>.pct (getValueAtPercentile,
//                                   count, max, mean, stdev); <tag> is "untagged" for no tag
//   java HlogRef sum TAG FILE...    read the logs with HistogramLogReader, add every interval
//                                   with TAG ("-" untagged, "*" any tag) and print its distribution
import java.io.File;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;

public class HlogRef {
    static final double[] PCTS = {0, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999, 100};

    // The accumulator HistogramLogProcessor builds: a copy of the first interval, auto-resizing.
    static Histogram accumulate(Histogram acc, Histogram h) {
        if (acc == null) {
            acc = h.copy();
            acc.reset();
            acc.setAutoResize(true);
        }
        acc.add(h);
        return acc;
    }

    static long draw(Random rnd, String shape) {
        switch (shape) {
        case "lognormal":
            return (long) Math.exp(Math.log(2e6) + 0.8 * rnd.nextGaussian());
        case "bimodal":
            return rnd.nextDouble() < 0.9 ? 1_500_000 + (long) (rnd.nextDouble() * 1e6)
                                          : 40_000_000 + (long) (rnd.nextDouble() * 5e6);
        case "pareto": {
            double v = 1e5 / Math.pow(1 - rnd.nextDouble(), 1 / 1.2);
            return (long) Math.min(v, 3e11);
        }
        default: // "small": integers 0..5000, unit buckets and zeros
            return (long) rnd.nextInt(5001);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("write")) {
            write(args[1], Long.parseLong(args[2]));
        } else if (args.length >= 3 && args[0].equals("sum")) {
            sum(args);
        } else {
            System.err.println("usage: HlogRef write OUT SEED | HlogRef sum TAG FILE...");
            System.exit(2);
        }
    }

    static void write(String out, long seed) throws Exception {
        Random rnd = new Random(seed);
        // tag -> {shape, kind}: kind picks the histogram's parameters
        String[][] tags = {
            {null, "lognormal", "fixed3"},
            {"api", "bimodal", "fixed3"},
            {"tail", "pareto", "auto3"},   // auto-resizing: highest differs per interval
            {"db", "lognormal", "us2"},    // lowest 1000, 2 digits
            {"tiny", "small", "fixed3"},
            {"edge", "lognormal", "to1ms"},  // highest 1e6 but values up to its last bucket (1048575)
        };
        Map<String, Histogram> sums = new LinkedHashMap<>();
        long startMs = 1700000000123L;
        PrintStream log = new PrintStream(new FileOutputStream(out));
        HistogramLogWriter w = new HistogramLogWriter(log);
        w.outputComment("[Logged by HlogRef (knee interop test), seed " + seed + "]");
        w.outputLogFormatVersion();
        w.outputStartTime(startMs);
        w.setBaseTime(startMs);
        w.outputBaseTime(startMs);
        w.outputLegend();
        int intervals = 12;
        for (int i = 0; i < intervals; i++) {
            for (String[] t : tags) {
                Histogram h;
                switch (t[2]) {
                case "auto3": h = new Histogram(3); break;
                case "us2": h = new Histogram(1000, 3_600_000_000_000L, 2); break;
                case "to1ms": h = new Histogram(1, 1_000_000L, 3); break;
                default: h = new Histogram(1, 3_600_000_000_000L, 3); break;
                }
                int n = 500 + rnd.nextInt(1500);
                for (int k = 0; k < n; k++) {
                    long v = draw(rnd, t[1]);
                    if (t[2].equals("to1ms")) // Java accepts values past highest up to the array's end
                        v = 900_000 + v % 148_576;
                    h.recordValue(v);
                }
                if (t[0] != null && t[0].equals("api") && i == 5)
                    h.recordValueWithCount(2_000_000, 1L << 40); // a count that needs a long varint
                if (t[0] != null && t[0].equals("tiny") && i == 3)
                    h.recordValueWithCount(0, 7); // zeros at index 0
                h.setStartTimeStamp(startMs + i * 1000L + 3);
                h.setEndTimeStamp(startMs + (i + 1) * 1000L + 1);
                h.setTag(t[0]);
                w.outputIntervalHistogram(h);
                String key = t[0] == null ? "untagged" : t[0];
                sums.put(key, accumulate(sums.get(key), h));
            }
        }
        log.close();
        for (Map.Entry<String, Histogram> e : sums.entrySet()) {
            Histogram h = e.getValue();
            try (PrintStream p = new PrintStream(new FileOutputStream(out + "." + e.getKey() + ".hgrm"))) {
                h.outputPercentileDistribution(p, 5, 1e6);
            }
            try (PrintStream p = new PrintStream(new FileOutputStream(out + "." + e.getKey() + ".pct"))) {
                p.printf(Locale.US, "count %d%n", h.getTotalCount());
                p.printf(Locale.US, "max %d%n", h.getMaxValue());
                p.printf(Locale.US, "min %d%n", h.getMinValue());
                p.printf(Locale.US, "mean %.17g%n", h.getMean());
                p.printf(Locale.US, "stdev %.17g%n", h.getStdDeviation());
                for (double q : PCTS)
                    p.printf(Locale.US, "p%s %d%n", Double.toString(q), h.getValueAtPercentile(q));
            }
        }
    }

    static void sum(String[] args) throws Exception {
        String tag = args[1].equals("-") ? null : args[1];
        boolean any = args[1].equals("*");
        Histogram acc = null;
        for (int i = 2; i < args.length; i++) {
            HistogramLogReader r = new HistogramLogReader(new File(args[i]));
            EncodableHistogram e;
            while ((e = r.nextIntervalHistogram()) != null) {
                String t = e.getTag();
                if (!any && (tag == null ? t != null : !tag.equals(t)))
                    continue;
                acc = accumulate(acc, (Histogram) e);
            }
            r.close();
        }
        if (acc == null) {
            System.err.println("HlogRef sum: no intervals with that tag");
            System.exit(1);
        }
        acc.outputPercentileDistribution(System.out, 5, 1e6);
    }
}
