package dev.lattice.testbackends;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Raw HTTP helpers for the backend tests (no SDKs): Azure Shared Key Lite signing and a plain client. */
final class Http {
    static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private Http() {
    }

    /** @return the current time in the RFC 1123 form Azure wants in {@code x-ms-date} */
    static String rfc1123Now() {
        return DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.US)
                .format(ZonedDateTime.now(ZoneOffset.UTC));
    }

    /** @return {@code SharedKeyLite account:base64(HMAC-SHA256(key, stringToSign))} */
    static String sharedKeyLite(String stringToSign) {
        return "SharedKeyLite " + AzuriteServer.ACCOUNT_NAME + ":" + sign(stringToSign);
    }

    /** @return {@code SharedKey account:base64(HMAC-SHA256(key, stringToSign))} */
    static String sharedKey(String stringToSign) {
        return "SharedKey " + AzuriteServer.ACCOUNT_NAME + ":" + sign(stringToSign);
    }

    private static String sign(String stringToSign) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(Base64.getDecoder().decode(AzuriteServer.ACCOUNT_KEY), "HmacSHA256"));
            String signature = Base64.getEncoder()
                    .encodeToString(mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
            return signature;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static HttpResponse<String> send(HttpRequest request) throws Exception {
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
