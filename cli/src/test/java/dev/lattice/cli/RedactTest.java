package dev.lattice.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedactTest {

    @Test
    void secretOptionValuesAreHidden() {
        assertThat(Support.redact("dynamodb://t?region=x&accessKeyId=AK&secretAccessKey=S3CR3T&sessionToken=T0K"))
                .isEqualTo("dynamodb://t?region=x&accessKeyId=AK&secretAccessKey=***&sessionToken=***");
        assertThat(Support.redact("postgres://h/db?user=u&password=pw")).isEqualTo("postgres://h/db?user=u&password=***");
        assertThat(Support.redact("azure-tables:?connectionString=a=b;AccountKey=zz&table=t"))
                .isEqualTo("azure-tables:?connectionString=***&table=t");
        assertThat(Support.redact("chronicle:./data")).isEqualTo("chronicle:./data");
    }
}
