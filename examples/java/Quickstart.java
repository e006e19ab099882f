// Quickstart: the typed Java client with models generated from examples/models.
//
// Generate the types (from the repository's root):
//   python3 tools/typegen/typegen.py --models examples/models --lang java \
//       --java-package models --java-class Models --out examples/java/models/Models.java
// Compile and run against a daemon started with --models examples/models:
//   javac -d out -cp 'clients/java/target/classes:clients/java/target/lib/*' \
//       examples/java/Quickstart.java examples/java/models/Models.java
//   TABLETHEORYD_URL=http://127.0.0.1:8737 \
//       java -cp 'out:clients/java/target/classes:clients/java/target/lib/*' Quickstart

import com.theorycloud.tabletheoryd.Ledger;
import com.theorycloud.tabletheoryd.TableTheoryClient;
import com.theorycloud.tabletheoryd.Typed;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import models.Models;
import models.Models.Order;
import models.Models.OrderKey;
import models.Models.User;
import models.Models.UserKey;
import models.Models.UserPatch;

public final class Quickstart {
    private Quickstart() {}

    public static void main(String[] args) {
        String run = UUID.randomUUID().toString().substring(0, 8); // keys of this run
        try (TableTheoryClient c = TableTheoryClient.fromEnv()) {
            // Register the generated models (no-op when the daemon loaded the same ones).
            Typed.register(c, Models.USER, false);
            Typed.register(c, Models.ORDER, false);
            Typed.Model<User, UserKey, UserPatch> users = Typed.model(c, Models.USER);
            var orders = Typed.model(c, Models.ORDER);
            users.ensureTable();
            orders.ensureTable();

            // Create, then update only if nobody changed the item in between.
            UserKey key = new UserKey("USER#" + run, "PROFILE");
            User ann = users.create(User.builder().PK(key.PK()).SK(key.SK()).nickname("ann")
                    .tags(Set.of("admin")).build());
            ann = users.update(key, new UserPatch().nickname("anna"), ann.version());
            System.out.println("updated " + ann.nickname() + " to version " + ann.version());
            check(users.get(new UserKey("USER#" + run, "NONE")) == null, "no item");

            // A batch: five orders written together, read back together.
            Typed.Batch<Order, OrderKey> batch = orders.batch();
            for (int i = 0; i < 5; i++) {
                batch.put(Order.builder().PK("CUST#" + run).SK("ORDER#" + i)
                        .amount(new BigDecimal(i + ".25")).status("new").build());
            }
            batch.commit();
            var got = orders.batchGet(List.of(new OrderKey("CUST#" + run, "ORDER#0"),
                    new OrderKey("CUST#" + run, "ORDER#9")));
            check(got.items().size() == 1 && got.missing().equals(List.of(new OrderKey("CUST#" + run, "ORDER#9"))),
                    "batch get");

            // A query across pages: two orders per request, the stream follows the cursor.
            BigDecimal total = orders.query(Models.ORDER_TABLE, "CUST#" + run, Typed.beginsWith("ORDER#"),
                    Typed.QueryOptions.pageSize(2)).map(Order::amount).reduce(BigDecimal.ZERO, BigDecimal::add);
            System.out.println("total " + total);
            check(total.compareTo(new BigDecimal("11.25")) == 0, "total");

            // A transaction: all or nothing.
            new Typed.Tx()
                    .create(Models.ORDER, Order.builder().PK("CUST#" + run).SK("ORDER#5")
                            .amount(new BigDecimal("1.50")).build())
                    .update(Models.USER, key, new UserPatch().nickname("ann (customer)"), ann.version())
                    .commit(c);

            // A job with a lease: only its holder works on the job.
            Ledger jobs = c.ledger();
            jobs.ensureTable();
            Ledger.Job job = jobs.createJob("tenant-" + run, "import-" + run);
            jobs.withLease(job.jobId(), "quickstart-" + run, Duration.ofSeconds(30),
                    () -> jobs.transition(job.jobId(), job.version(), null, "RUNNING"));
            System.out.println("job " + jobs.getJob(job.jobId()).status());
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("quickstart: " + what);
        }
    }
}
