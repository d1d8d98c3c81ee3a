// Reference side of tests/e2e/hdr_java.sh: runs a command script against the Java
// HdrHistogram library and prints every number knee's C implementation must reproduce.
// The C side is `test_hist --java-dump` (tests/unit/test_hist.c); the two outputs must be
// byte-identical. Script commands (one per line):
//   new L H d          start a new histogram (becomes current; histograms are numbered from 0)
//   r v c              recordValueWithCount(v, c)
//   c v i              recordValueWithExpectedInterval(v, i)
//   add k              current.add(histogram k)
//   dump               print statistics, percentiles, the four iterators, index math
//   dist t ratio csv   outputPercentileDistribution(System.out, t, ratio[, csv])
//   fmt bits d         String.format("%.<d>f", Double.longBitsToDouble(bits))
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Locale;
import org.HdrHistogram.*;

public class HdrCheck {
    static final double[] PCTS = {0, 1e-9, 0.001, 0.1, 0.5, 1, 5, 10, 12.345, 20, 25, 33.3, 50, 66.6, 75,
        80, 87.5, 90, 95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 99.9999, 100};

    static String bits(double d) { return Long.toHexString(Double.doubleToLongBits(d)); }

    static void step(String kind, HistogramIterationValue v) {
        System.out.println(kind + " " + v.getValueIteratedTo() + " " + v.getValueIteratedFrom() + " "
            + v.getCountAtValueIteratedTo() + " " + v.getCountAddedInThisIterationStep() + " "
            + v.getTotalCountToThisValue() + " " + bits(v.getPercentile()) + " "
            + bits(v.getPercentileLevelIteratedTo()));
    }

    static void dump(Histogram h) {
        System.out.println("total " + h.getTotalCount() + " min " + h.getMinValue() + " max " + h.getMaxValue()
            + " mean " + bits(h.getMean()) + " stdev " + bits(h.getStdDeviation())
            + " footprint " + h.getEstimatedFootprintInBytes());
        for (double p : PCTS)
            System.out.println("pct " + bits(p) + " " + h.getValueAtPercentile(p));
        for (int k = 1; k < 200; k++) {
            double p = 100.0 * k / 199;
            System.out.println("pct " + bits(p) + " " + h.getValueAtPercentile(p));
        }
        for (HistogramIterationValue v : h.recordedValues()) step("rec", v);
        for (int t : new int[] {1, 5, 7}) {
            for (HistogramIterationValue v : h.percentiles(t)) step("pt" + t, v);
        }
        long max = h.getMaxValue();
        long unit = Math.max(1, max / 37);
        for (HistogramIterationValue v : h.linearBucketValues(unit)) step("lin", v);
        for (HistogramIterationValue v : h.logarithmicBucketValues(1000, 2.0)) step("log2", v);
        for (HistogramIterationValue v : h.logarithmicBucketValues(3, 1.7)) step("log17", v);
        long[] probes = {0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 100000, 999999, 1000000, 123456789,
            max, max / 3, h.getMinValue(), 3599999999999L};
        for (long x : probes) {
            if (x < 0) continue;
            System.out.println("idx " + x + " " + h.lowestEquivalentValue(x) + " " + h.highestEquivalentValue(x) + " "
                + h.medianEquivalentValue(x) + " " + h.sizeOfEquivalentValueRange(x) + " "
                + h.nextNonEquivalentValue(x) + " " + h.getCountAtValue(Math.min(x, h.getHighestTrackableValue())));
        }
    }

    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.US);
        ArrayList<Histogram> hs = new ArrayList<>();
        Histogram cur = null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            switch (f[0]) {
            case "new":
                cur = new Histogram(Long.parseLong(f[1]), Long.parseLong(f[2]), Integer.parseInt(f[3]));
                hs.add(cur);
                break;
            case "r": cur.recordValueWithCount(Long.parseLong(f[1]), Long.parseLong(f[2])); break;
            case "c": cur.recordValueWithExpectedInterval(Long.parseLong(f[1]), Long.parseLong(f[2])); break;
            case "add": cur.add(hs.get(Integer.parseInt(f[1]))); break;
            case "dump": dump(cur); break;
            case "dist":
                cur.outputPercentileDistribution(System.out, Integer.parseInt(f[1]), Double.parseDouble(f[2]),
                    f[3].equals("1"));
                break;
            case "fmt":
                System.out.println(String.format("%." + f[2] + "f", Double.longBitsToDouble(Long.parseUnsignedLong(f[1], 16))));
                break;
            default:
                if (!f[0].isEmpty() && !f[0].startsWith("#"))
                    throw new IllegalArgumentException("bad command: " + line);
            }
        }
        System.out.flush();
    }
}
