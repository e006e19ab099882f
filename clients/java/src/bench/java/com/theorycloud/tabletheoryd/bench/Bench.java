// SPDX-License-Identifier: Apache-2.0

// Per-call overhead of the Java client against raw java.net.http: GET of one item.

package com.theorycloud.tabletheoryd.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.theorycloud.tabletheoryd.Item;
import com.theorycloud.tabletheoryd.Key;
import com.theorycloud.tabletheoryd.ModelClient;
import com.theorycloud.tabletheoryd.TableTheoryClient;
import com.theorycloud.tabletheoryd.Typed;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import models.Models;

/**
 * Usage: TABLETHEORYD_URL=http://127.0.0.1:PORT java -cp ... Bench [N]
 * against a daemon started with --models examples/models (model User).
 * Both sides do the same work per call: one GET on a kept-alive connection
 * and a JSON parse of the answer (numbers exact). A third side is the typed
 * layer with the generated examples/java/models/Models.java (a User record).
 */
public final class Bench {
    private Bench() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        String url = System.getenv().getOrDefault("TABLETHEORYD_URL", TableTheoryClient.DEFAULT_URL);
        TableTheoryClient client = TableTheoryClient.fromEnv();
        ModelClient users = client.model("User");
        users.put(Item.of("PK", "USER#bench", "SK", "PROFILE", "nickname", "bench"));
        Key key = Key.of("USER#bench", "PROFILE");

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        ObjectMapper mapper = new ObjectMapper();
        HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/v1/models/User/items/USER%23bench/PROFILE")).GET().build();

        Runnable viaClient = () -> users.get(key);
        Typed.Model<Models.User, Models.UserKey, Models.UserPatch> typedUsers = Typed.model(client, Models.USER);
        Models.UserKey typedKey = new Models.UserKey("USER#bench", "PROFILE");
        Runnable viaTyped = () -> {
            if (!"bench".equals(typedUsers.get(typedKey).nickname())) {
                throw new IllegalStateException("bad answer");
            }
        };
        Runnable viaRaw = () -> {
            try {
                HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() != 200) {
                    throw new IllegalStateException("HTTP " + r.statusCode());
                }
                mapper.readTree(r.body());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        // Warm both up (JIT), then alternate rounds so drift hits both alike.
        time(viaClient, n / 2);
        time(viaRaw, n / 2);
        time(viaTyped, n / 2);
        double client1 = 0;
        double raw1 = 0;
        double typed1 = 0;
        int rounds = 5;
        for (int i = 0; i < rounds; i++) {
            raw1 += time(viaRaw, n / rounds);
            client1 += time(viaClient, n / rounds);
            typed1 += time(viaTyped, n / rounds);
        }
        double c = client1 / rounds;
        double r = raw1 / rounds;
        System.out.printf("java GET one item: client %.1f us/op, raw java.net.http %.1f us/op, ratio %.2f (n=%d)%n",
                c / 1000, r / 1000, c / r, n);
        double t = typed1 / rounds;
        System.out.printf("java GET one item: typed %.1f us/op, raw java.net.http %.1f us/op, ratio %.2f (n=%d)%n",
                t / 1000, r / 1000, t / r, n);
    }

    private static double time(Runnable op, int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            op.run();
        }
        return (double) (System.nanoTime() - t0) / n;
    }
}
