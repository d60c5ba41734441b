package dev.lattice.provider.dynamodb;

import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The DynamoDB item size rule, in one place: the provider plans its items with it and the tests check every item
 * sent to the server with it, so an emulator that counts more leniently cannot hide an item above the limit.
 *
 * <p>An item's size is the sum, over its attributes, of the attribute name's UTF-8 length plus the value's size:
 * strings count their UTF-8 bytes, binaries their raw bytes, booleans and nulls 1 byte, sets the sum of their
 * elements, lists and maps 3 bytes plus 1 byte per element plus the elements. A number counts
 * {@code 1 + ceil(d / 2)} bytes for {@code d} significant digits, plus 1 byte when {@code d} and the decimal
 * exponent are both even, plus 1 byte when negative, and 1 byte for zero. That is the byte-accurate rule the dynalite
 * emulator implements; it is never below the approximation AWS documents ("1 byte per two significant digits plus
 * 1 byte"). The limit is {@value #MAX_ITEM_BYTES} bytes (400 KB) per item, attribute names included.
 *
 * <p>Stateless and thread-safe.
 */
public final class DynamoItemSize {

    /** DynamoDB's maximum item size, in bytes, inclusive: 400 KB including attribute names. */
    public static final int MAX_ITEM_BYTES = 400 * 1024;

    private DynamoItemSize() {
    }

    /**
     * The size of an item.
     *
     * @param item the attributes, name to value
     * @return the size in bytes, as DynamoDB counts it against {@link #MAX_ITEM_BYTES}
     * @throws NullPointerException if the item, a name or a value is null
     * @throws IllegalArgumentException if a value has no type set or a number cannot be parsed
     */
    public static long of(Map<String, AttributeValue> item) {
        long sum = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            sum += attribute(e.getKey(), e.getValue());
        }
        return sum;
    }

    /**
     * The size one attribute adds to an item: its name's UTF-8 length plus its value's size.
     *
     * @param name the attribute name
     * @param value the value
     * @return bytes
     */
    public static long attribute(String name, AttributeValue value) {
        return utf8(name) + value(value);
    }

    /**
     * The size of a value, without the attribute name.
     *
     * @param v the value
     * @return bytes
     * @throws IllegalArgumentException if the value has no type set
     */
    public static long value(AttributeValue v) {
        switch (v.type()) {
            case S:
                return utf8(v.s());
            case N:
                return number(v.n());
            case B:
                return v.b().asByteArrayUnsafe().length;
            case BOOL:
            case NUL:
                return 1;
            case SS: {
                long sum = 0;
                for (String s : v.ss()) {
                    sum += utf8(s);
                }
                return sum;
            }
            case NS: {
                long sum = 0;
                for (String n : v.ns()) {
                    sum += number(n);
                }
                return sum;
            }
            case BS: {
                long sum = 0;
                for (SdkBytes b : v.bs()) {
                    sum += b.asByteArrayUnsafe().length;
                }
                return sum;
            }
            case L: {
                List<AttributeValue> list = v.l();
                long sum = 3 + list.size();
                for (AttributeValue x : list) {
                    sum += value(x);
                }
                return sum;
            }
            case M: {
                long sum = 3 + v.m().size();
                for (Map.Entry<String, AttributeValue> e : v.m().entrySet()) {
                    sum += attribute(e.getKey(), e.getValue());
                }
                return sum;
            }
            default:
                throw new IllegalArgumentException("attribute value without a known type: " + v);
        }
    }

    /**
     * The size of a number value.
     *
     * @param n the number in DynamoDB's text form
     * @return bytes
     * @throws IllegalArgumentException if it is not a number
     */
    public static long number(String n) {
        BigDecimal d;
        try {
            d = new BigDecimal(n.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a number: '" + n + "'", e);
        }
        if (d.signum() == 0) {
            return 1;
        }
        d = d.stripTrailingZeros();
        int digits = d.precision();
        int exponent = d.precision() - d.scale() - 1;
        long size = 1 + (digits + 1) / 2;
        if (digits % 2 == 0 && exponent % 2 == 0) {
            size++;
        }
        if (d.signum() < 0) {
            size++;
        }
        return size;
    }

    /**
     * The size of a {@code long} stored as a number.
     *
     * @param n the value
     * @return bytes, as {@link #number(String)}
     */
    public static long number(long n) {
        return number(Long.toString(n));
    }

    static long utf8(String s) {
        int len = s.length();
        boolean ascii = true;
        for (int i = 0; i < len && ascii; i++) {
            ascii = s.charAt(i) < 0x80;
        }
        return ascii ? len : s.getBytes(StandardCharsets.UTF_8).length;
    }
}
